package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// signalled starts benchbook run on nb, waits until stderr shows ready (or
// it exits), sends sig, and returns how long after the signal it ended
// (0: it ended before the signal) and its stderr. A run still going
// 10 s after the signal is killed and fails the test.
func signalled(t *testing.T, nb, ready string, sig syscall.Signal) (time.Duration, string) {
	t.Helper()
	cmd := exec.Command(cliBinary(t), "run", "-no-color", nb)
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu bytes.Buffer
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	exited := make(chan struct{})
	wait := func(d time.Duration) bool {
		select {
		case <-exited:
			return true
		case <-time.After(d):
			return false
		}
	}
	waitReady := time.After(20 * time.Second)
	for seen := false; !seen; {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				return 0, mu.String()
			}
			mu.WriteString(l + "\n")
			seen = strings.Contains(l, ready)
		case <-waitReady:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("never saw %q:\n%s", ready, mu.String())
		}
	}
	go func() {
		for l := range lines {
			mu.WriteString(l + "\n")
		}
		cmd.Wait()
		close(exited)
	}()
	time.Sleep(300 * time.Millisecond) // into the read (or past its failure)
	sent := time.Now()
	if cmd.Process.Signal(sig) != nil || wait(0) {
		<-exited
		return 0, mu.String()
	}
	if !wait(10 * time.Second) {
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%v: still running 10 s after the signal:\n%s", sig, mu.String())
	}
	return time.Since(sent), mu.String()
}

// TestBlockedReadEndsOnSignal: file("/proc/kmsg"), a "regular" file whose
// read waits for the next kernel message, ends within a second of SIGTERM
// or SIGINT (it now fails at once, saying why). Before, the read waited in
// Go's poller, deaf to both, until SIGKILL.
func TestBlockedReadEndsOnSignal(t *testing.T) {
	fd, err := syscall.Open("/proc/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil { // not root, or no such file: under CI a failure, not a skip
		needs.Missing(t, fmt.Sprintf("a readable /proc/kmsg (%v)", err), "run the tests as root on Linux")
	}
	buf := make([]byte, 1<<16)
	for { // drain what is there, so a read must wait
		if n, err := syscall.Read(fd, buf); n <= 0 || err != nil {
			break
		}
	}
	syscall.Close(fd)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		nb := writeNB(t, "# %% ok\nx = 1\n\n# %% kmsg\ny = file(\"/proc/kmsg\")\n")
		took, stderr := signalled(t, nb, "▶ run kmsg", sig)
		if took > time.Second {
			t.Errorf("%v: ended %v after the signal", sig, took)
		}
		if took == 0 && !strings.Contains(stderr, "/proc/kmsg") {
			t.Errorf("%v: ended before the signal without naming the file:\n%s", sig, stderr)
		}
	}
}

// TestFIFOSaltEndsOnSignal: a FIFO where the cache's salt file was is
// refused (the salt is read like every cache file), naming it; it used to
// block the open until SIGKILL.
func TestFIFOSaltEndsOnSignal(t *testing.T) {
	nb := writeNB(t, "# %% a\nx = param(\"n\", 1)\nx\n")
	if code, _, stderr := runCLI(t, "run", nb); code != 0 {
		t.Fatalf("first run: %d\n%s", code, stderr)
	}
	salts, _ := filepath.Glob(filepath.Join(filepath.Dir(nb), ".benchbook", "nb", "*", "salt"))
	if len(salts) != 1 {
		t.Fatalf("salt files: %v", salts)
	}
	os.Remove(salts[0])
	if err := syscall.Mkfifo(salts[0], 0o600); err != nil {
		needs.Missing(t, fmt.Sprintf("mkfifo (%v)", err), "a file system that holds FIFOs")
	}
	took, stderr := signalled(t, nb, "", syscall.SIGTERM)
	if took > time.Second {
		t.Errorf("ended %v after SIGTERM", took)
	}
	if !strings.Contains(stderr, "salt") || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("the error does not name the salt:\n%s", stderr)
	}
}

// TestLockWaitEndsOnSignal: a run waiting for another's cache lock ends
// within a second of SIGTERM; flock restarted after the signal, so it
// waited for the holder whatever the user did.
func TestLockWaitEndsOnSignal(t *testing.T) {
	nb := writeNB(t, "# %% a\nx = 1\n")
	if code, _, stderr := runCLI(t, "run", nb); code != 0 {
		t.Fatalf("first run: %d\n%s", code, stderr)
	}
	f, err := os.OpenFile(filepath.Join(filepath.Dir(nb), ".benchbook", "nb", "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	took, stderr := signalled(t, nb, "waiting for the cache lock", syscall.SIGTERM)
	if took == 0 || took > time.Second {
		t.Errorf("ended %v after SIGTERM:\n%s", took, stderr)
	}
}
