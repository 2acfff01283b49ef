package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
)

const peekNotebook = `# %% stats
tps = struct(mean = 1.5, median = 1.2, max = 9)

# %% never
slow = fail("completion must not run this cell")
`

// TestCompleterAttributes: tps.me<Tab> completes the attributes of a value
// that is at hand (computed or cached), and never runs a cell to find out.
func TestCompleterAttributes(t *testing.T) {
	nb := writeNotebook(t, peekNotebook)
	e, err := openNotebook(context.Background(), nb, &notebookFlags{}, runtime.Options{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.RunCell("stats", runtime.RunIfStale); err != nil {
		t.Fatal(err)
	}
	c := &completer{globals: e.Globals, cells: func() []string { return nil }, values: completionValues(), peek: e.Peek}
	got, n := c.Do([]rune("x = tps.me"), len("x = tps.me"))
	var gotS []string
	for _, g := range got {
		gotS = append(gotS, string(g))
	}
	if strings.Join(gotS, "|") != "an|dian" || n != 2 {
		t.Errorf("complete tps.me = %q, %d; want [an dian], 2", gotS, n)
	}
	if got, _ := c.Do([]rune("slow.x"), 6); len(got) != 0 {
		t.Errorf("completion on a never-computed cell offered %q", got)
	}
	for _, st := range e.CellRuns() {
		if st.Def.Name == "never" && (st.Executed || st.Err != nil) {
			t.Errorf("completion ran cell never: status %s, err %v", st.Status, st.Err)
		}
	}
}

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
