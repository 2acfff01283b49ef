package resstate

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFOStateIDEndsAtOnce: a FIFO put where a resource's state-id file
// is made the run hang in its open until SIGKILL (issue 34: every read of
// the cache's own files is bounded). Now it reads as no state.
func TestFIFOStateIDEndsAtOnce(t *testing.T) {
	id := t.TempDir()
	fifo := filepath.Join(id, stateFile)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- readStateID(id) }()
	select {
	case s := <-done:
		if s != "" {
			t.Errorf("a FIFO read as state %q", s)
		}
		wrote := make(chan struct{})
		go func() { writeStateID(id, "abc"); close(wrote) }()
		select {
		case <-wrote:
		case <-time.After(2 * time.Second):
			if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				r.Close()
			}
			t.Fatal("writing the state-id over a FIFO still blocks after 2s")
		}
		if got := readStateID(id); got != "abc" {
			t.Errorf("state %q after writing abc over the FIFO", got)
		}
	case <-time.After(2 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // let the reader go
			w.Close()
		}
		t.Fatal("reading a FIFO state-id still blocks after 2s")
	}
}
