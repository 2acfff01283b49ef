package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// peekNotebook is a value at hand (stats) and a cell that must not run.
const peekNotebook = `# %% stats
tps = struct(mean = 1.5, median = 1.2, max = 9)

# %% never
slow = fail("completion must not run this cell")
`

// TestREPLWarnsOnShadowing: assigning a notebook global at the prompt is
// allowed (the REPL is a scratchpad) but said, once.
func TestREPLWarnsOnShadowing(t *testing.T) {
	nb := writeNotebook(t, peekNotebook)
	cmd := exec.Command(binary, "repl", nb)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = strings.NewReader("tps = 5\ntps + 1\ntps = 6\nmine = 1\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	warn := "warning: tps is a notebook global (defined in cell stats)"
	if n := strings.Count(stderr.String(), warn); n != 1 {
		t.Errorf("want the shadowing warning once, got %d times:\n%s", n, stderr.String())
	}
	if strings.Contains(stderr.String(), "mine is a notebook global") {
		t.Error("a new REPL name was reported as shadowing")
	}
	if !strings.Contains(stdout.String(), "6\n") {
		t.Errorf("the REPL does not see its own value:\n%s", stdout.String())
	}
}
