package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The streamed hash equals the hash of the whole content read at once.
func TestSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := SHA256(p)
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]); err != nil || got != want {
		t.Fatalf("SHA256 = %q, %v; want %q", got, err, want)
	}
	if _, err := SHA256(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: err = %v, want not-exist", err)
	}
}

// TestSHA256RefusesAFIFO: a FIFO is refused at once, not read until a
// writer that never comes closes it.
func TestSHA256RefusesAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := SHA256(p); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("SHA256 of a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SHA256 of a FIFO still blocks after 5s")
	}
}

// TestNoWaitNeverWaits: a pollable descriptor with no data (a pipe, as
// /proc/kmsg is between kernel messages) fails with ErrWouldBlock at once;
// a plain Read parks in Go's poller until data comes, which may be never.
// What is there is read first.
func TestNoWaitNeverWaits(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.Write([]byte("abc"))
	done := make(chan error, 1)
	var got []byte
	go func() {
		buf := make([]byte, 10)
		for {
			n, err := NoWait(r).Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrWouldBlock) || string(got) != "abc" {
			t.Errorf("read %q, then %v", got, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("NoWait waited for data")
	}
}
