package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTwoRunsOfOneNotebook (issue 25): a second `benchbook run` of a
// notebook the first is still running waits for the cache lock, says who
// holds it, then finds the first run's entries: both succeed, the second
// with hits only, and a third run reads a cache that is not damaged.
func TestTwoRunsOfOneNotebook(t *testing.T) {
	t.Parallel()
	nb := writeNB(t, "# %% slow\nn = 0\nfor i in range(10000000):\n    n += i\nn\n\n# %% after\nm = n + 1\nm\n")
	first := exec.Command(binary, "run", "-no-color", nb)
	stderr, err := first.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	firstErr := make(chan string, 1)
	started := make(chan struct{})
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "▶ run slow") {
				close(started)
			}
		}
		firstErr <- all.String()
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the first run never started its cell")
	}
	var second bytes.Buffer
	cmd := exec.Command(binary, "run", "-no-color", nb)
	cmd.Stderr = &second
	secondDone := make(chan error, 1)
	go func() { secondDone <- cmd.Run() }()
	var err2 error
	select {
	case err2 = <-secondDone:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the second run still waits 60s on")
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v\n%s", err, <-firstErr)
	}
	if err2 != nil {
		t.Fatalf("second run: %v\n%s", err2, second.String())
	}
	out := second.String()
	if !strings.Contains(out, "waiting for the cache lock") || !strings.Contains(out, "held by pid") {
		t.Errorf("the second run does not say it waits:\n%s", out)
	}
	if !strings.Contains(out, "2 cells: 2 hit") {
		t.Errorf("the second run did not read the first's entries:\n%s", out)
	}
	code, _, third := runCLI(t, "run", "-no-color", nb)
	if code != 0 || strings.Contains(third, "damaged") || !strings.Contains(third, "2 cells: 2 hit") {
		t.Errorf("third run: exit %d\n%s", code, third)
	}
}
