package postgres

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFOsInTheClusterDirEndAtOnce: a FIFO put where one of the cluster's
// own files is (generation, port, checkpoint, the settings record, a lock
// file, the log) made benchbook hang in its open until SIGKILL (issue 34:
// every read of the cache's own files is bounded). Each read now ends at
// once, as a missing or unreadable file; the writes that follow a read
// (the port, the settings, the log) replace the FIFO or refuse it.
func TestFIFOsInTheClusterDirEndAtOnce(t *testing.T) {
	root := t.TempDir()
	c := &cluster{root: root}
	if err := os.MkdirAll(c.dataDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		file string
		read func()
	}{
		{filepath.Join(root, generationFile), func() { readGeneration(root) }},
		{filepath.Join(root, "port"), func() { c.pickPort() }},
		{filepath.Join(root, checkpointFile), func() { c.recordedCheckpoint() }},
		{filepath.Join(c.dataDir(), settingsFile), func() { c.loadSettings(); c.saveSettings() }},
		{filepath.Join(c.dataDir(), "postmaster.pid"), func() { lockPid(filepath.Join(c.dataDir(), "postmaster.pid")) }},
		{c.logPath(), func() {
			tailFile(c.logPath(), 5)
			c.logSince(0, 5)
			if f, err := openLog(c.logPath()); err == nil {
				f.Close()
			}
		}},
	} {
		if err := syscall.Mkfifo(r.file, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { r.read(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			for range 2 { // let the readers go
				if w, err := os.OpenFile(r.file, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Errorf("reading a FIFO at %s still blocks after 2s", filepath.Base(r.file))
		}
	}
}

// TestImageClusterClearsStaleLocks: an image cluster's postmaster runs in
// the host's pid namespace (HostPID), so the pid in its postmaster.pid is
// a host pid and a dead one is recognised as for a host cluster. Before,
// image clusters kept the lock of a dead postmaster ("a container's pids
// are its own namespace's"), and PostgreSQL, checking the pid from the
// host's namespace, refused to start while a reused pid lived.
func TestImageClusterClearsStaleLocks(t *testing.T) {
	for _, img := range []*pgImage{nil, {image: "any"}} {
		c := &cluster{root: t.TempDir(), img: img}
		if err := os.MkdirAll(c.dataDir(), 0o700); err != nil {
			t.Fatal(err)
		}
		gone := exec.Command("true")
		if err := gone.Run(); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(c.dataDir(), "postmaster.pid")
		if err := os.WriteFile(lock, []byte(fmt.Sprintf("%d\n%s\n", gone.Process.Pid, c.dataDir())), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := c.readyDataDir(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(lock); err == nil {
			t.Errorf("image %v: the lock of a dead postmaster is still there", img != nil)
		}
	}
}
