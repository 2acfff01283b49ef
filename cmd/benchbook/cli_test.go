package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliBinary is the benchbook binary TestMain built, for the tests that
// need a real process (signals, exit codes).
func cliBinary(t *testing.T) string { return binary }

func writeNB(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nb.star")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runCLI calls the command in-process, as main does.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), &out, &errb, args)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	ok := writeNB(t, "# %% a\nx = 1\nx\n")
	bad := writeNB(t, "# %% a\nx = 1\n\n# %% b\ny = x / 0\n")
	syntaxErr := writeNB(t, "# %% a\nx = (\n")
	gated := writeNB(t, "# %% a\nx = 1\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", ok}, 0, "1 cells: 1 ran"},
		{[]string{"run", ok}, 0, "1 cells: 1 hit"},
		{[]string{"run", bad}, 1, "floating-point division by zero"},
		{[]string{"run", syntaxErr}, 1, "nb.star:3:1:"},
		{[]string{"run"}, 2, "want one notebook path"},
		{[]string{"run", ok, "-p", "novalue"}, 2, "want name=value"},
		{[]string{"run", ok, "-rerun", "nope"}, 2, "-rerun nope: no code cell of that name"},
		{[]string{"version", "extra"}, 2, "takes no arguments"},
		{[]string{"run", gated, "-baseline", filepath.Join(t.TempDir(), "missing.json")}, 2, "-baseline: open"},
		{[]string{"run", gated, "-baseline", bad}, 2, "not a JSON record"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"run", "/dev/zero"}, 1, "/dev/zero: not a regular file (a character device)"},
		{[]string{"run", "-h"}, 0, "Usage: benchbook run"},
		{[]string{"run", ok, "-p", "unused=3"}, 0, "parameter unused is not read by any cell"},
		{[]string{"render", bad}, 0, "1 never"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d; stderr does not contain %q:\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(ok, ".star") + ".html"); err != nil {
		t.Errorf("record not written: %v", err)
	}
	// A usage error stops before anything runs: gated's cells never ran.
	if _, err := os.Stat(strings.TrimSuffix(gated, ".star") + ".html"); err == nil {
		t.Error("a run with a missing baseline wrote a record: the notebook ran before the check")
	}
	if code, out, _ := runCLI(t, "version"); code != 0 || !strings.HasPrefix(out, "benchbook ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

func TestCellsJSON(t *testing.T) {
	nb := writeNB(t, "# %% [markdown]\n# # T\n\n# %% a\nx = 1\n\n# %% b\ny = x + 1\n")
	code, out, stderr := runCLI(t, "cells", "--json", nb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"name": "b"`, `"reads": [`, `"x"`, `"status": "stale"`, `"kind": "markdown"`} {
		if !strings.Contains(out, want) {
			t.Errorf("cells --json lacks %s:\n%s", want, out)
		}
	}
}

// slowNB has a quick cell, then one that takes several seconds.
const slowNB = `# %% quick
a = tick_file("quick")

# %% slow
n = 0
for i in range(200000000):
    n += 1
b = a + n
`

// A notebook's quick cell leaves a mark in a file each time it runs, so
// the tests can count executions across processes.
func markingNB(t *testing.T) (nbPath, marks string) {
	dir := t.TempDir()
	marks = filepath.Join(dir, "marks.txt")
	src := strings.Replace(slowNB, `tick_file("quick")`, `len(file("marks.txt"))`, 1)
	nbPath = filepath.Join(dir, "nb.star")
	os.WriteFile(nbPath, []byte(src), 0o644)
	os.WriteFile(marks, []byte("m"), 0o644)
	return nbPath, marks
}

// startAndWait starts benchbook run and returns once the slow cell started.
func startAndWait(t *testing.T, nb string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(cliBinary(t), "run", "--no-color", nb)
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen bytes.Buffer
	sc := bufio.NewScanner(pipe)
	deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "▶ run slow") {
			go func() {
				for sc.Scan() {
					seen.WriteString(sc.Text() + "\n")
				}
			}()
			return cmd, &seen
		}
	}
	t.Fatalf("slow cell never started:\n%s", seen.String())
	return nil, nil
}

func TestSIGKILLKeepsFinishedCells(t *testing.T) {
	nb, _ := markingNB(t)
	cmd, _ := startAndWait(t, nb)
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	code, out, stderr := runCLI(t, "cells", nb)
	if code != 0 || !regexpLine(out, "quick", "hit") || !regexpLine(out, "slow", "stale") {
		t.Fatalf("after SIGKILL: exit %d\n%s%s", code, out, stderr)
	}
}

func TestInterruptExits130AndKeepsRecord(t *testing.T) {
	nb, _ := markingNB(t)
	cmd, stderr := startAndWait(t, nb)
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if took := time.Since(sent); took > 2*time.Second {
		t.Errorf("exit took %v after Ctrl-C", took)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	html, err := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".html")
	if err != nil {
		t.Fatalf("no record after Ctrl-C: %v", err)
	}
	if !bytes.Contains(html, []byte("interrupted")) {
		t.Error("record does not say the run was interrupted")
	}
	if _, out, _ := runCLI(t, "cells", nb); !regexpLine(out, "quick", "hit") {
		t.Errorf("quick not cached after Ctrl-C:\n%s", out)
	}
}

// regexpLine reports whether a line starts with name and mentions status.
func regexpLine(out, name, status string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == name && f[2] == status {
			return true
		}
	}
	return false
}

func TestBaselineGates(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.star")
	write := func(after string) {
		src := "# %% cmp\ncompare([100, 101, 99, 100], [" + after + "], metric = \"rps\", better = \"higher\")\n"
		os.WriteFile(nb, []byte(src), 0o644)
	}
	write("120, 121, 119, 120")
	base := filepath.Join(dir, "base.json")
	if code, _, stderr := runCLI(t, "run", "-format", "json", "-o", base, nb); code != 0 {
		t.Fatalf("baseline run: %d\n%s", code, stderr)
	}
	write("119, 120, 118, 121") // within 5%
	if code, _, stderr := runCLI(t, "run", "-baseline", base, nb); code != 0 || !strings.Contains(stderr, "ok") {
		t.Fatalf("small change: exit %d\n%s", code, stderr)
	}
	write("100, 102, 101, 100") // -16%
	code, _, stderr := runCLI(t, "run", "-baseline", base, nb)
	if code != 1 || !strings.Contains(stderr, "REGRESSION") || !strings.Contains(stderr, "1 of 1 regression gates failed") {
		t.Fatalf("regression: exit %d\n%s", code, stderr)
	}
	html, _ := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".html")
	if !bytes.Contains(html, []byte("REGRESSION")) {
		t.Error("the record does not show the failed gate")
	}
	// A baseline from another machine is refused unless exploratory.
	data, _ := os.ReadFile(base)
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, bytes.Replace(data, []byte(`"cores": `), []byte(`"cores": 9`), 1), 0o644)
	if code, _, stderr := runCLI(t, "run", "-baseline", other, nb); code != 2 || !strings.Contains(stderr, "another kind of machine") {
		t.Fatalf("mismatch: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "-baseline", other, "-allow-env-mismatch", nb); code != 0 || !strings.Contains(stderr, "exploratory") {
		t.Fatalf("exploratory: exit %d\n%s", code, stderr)
	}
}
