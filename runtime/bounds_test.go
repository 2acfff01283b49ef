package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDeepValueIsAnErrorNamingTheCell: a cell that builds a list nested a
// million deep fails at once with an error naming the cell, the value and
// the variable that raises the limit. Before, displaying it took minutes
// (Starlark prints in time quadratic in the depth).
func TestDeepValueIsAnErrorNamingTheCell(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"# %% deep\nx = []\nfor i in range(1000000):\n    x = [x]\nx\n", "cell deep: output 1 (list): nested too deeply"},
		{"# %% deep\nx = []\nfor i in range(1000000):\n    x = [x]\n", "cell deep: value x (list): nested too deeply"},
	} {
		start := time.Now()
		r := runNotebook(t, t.TempDir(), tc.src, Options{})
		st := r.e.CellRun("deep")
		if st.Status != StatusError || st.Err == nil || !strings.Contains(st.Err.Error(), tc.want) || !strings.Contains(st.Err.Error(), "BENCHBOOK_MAX_DEPTH") {
			t.Errorf("status %s, err %v; want %q", st.Status, st.Err, tc.want)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("the run took %v", d)
		}
	}
}

// TestFileRefusesDevicesAndFIFOs: file() on /dev/zero or a FIFO is an
// error naming the builtin and the path, not an endless read or a block.
func TestFileRefusesDevicesAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", "pipe"} {
		done := make(chan *nbRun, 1)
		go func() { done <- runNotebook(t, dir, "# %% read\nx = file(\""+path+"\")\n", Options{}) }()
		select {
		case r := <-done:
			st := r.e.CellRun("read")
			if st.Err == nil || !strings.Contains(st.Err.Error(), "file: ") || !strings.Contains(st.Err.Error(), path) || !strings.Contains(st.Err.Error(), "not a regular file") {
				t.Errorf("%s: %v", path, st.Err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("file(%q) still running after 20s", path)
		}
	}
}

// TestNotebookOverTheSizeLimit: a notebook over BENCHBOOK_MAX_FILE is
// refused by name before it is parsed.
func TestNotebookOverTheSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.star")
	os.WriteFile(path, []byte("# %% a\nx = 1\n"+strings.Repeat("# padding\n", 300)), 0o644)
	t.Setenv("BENCHBOOK_MAX_FILE", "1K")
	if _, err := ParseFile(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "BENCHBOOK_MAX_FILE") {
		t.Fatalf("err = %v", err)
	}
	if _, err := ParseFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
		t.Fatalf("/dev/zero: %v", err)
	}
}

// TestRunawayRecursionTraceIsBounded: Starlark stops a runaway recursion
// near 100,000 frames; the trace keeps a few of them, not a 2 MB record.
func TestRunawayRecursionTraceIsBounded(t *testing.T) {
	r := runNotebook(t, t.TempDir(), "# %% rec\ndef f(n):\n    return f(n + 1)\nx = f(0)\n", Options{})
	st := r.e.CellRun("rec")
	if st.Err == nil || !strings.Contains(st.Err.Error(), "stack overflow") {
		t.Fatalf("err = %v", st.Err)
	}
	if n := strings.Count(st.Trace, "\n"); n > 2*maxFrames || !strings.Contains(st.Trace, "frames not shown") || !strings.Contains(st.Trace, "in <toplevel>") {
		t.Errorf("trace of %d lines:\n%.2000s", n, st.Trace)
	}
}

// TestReplDeepOutputIsBounded: an expression typed at the REPL that shows
// a million-deep list gets the same error as a cell, not minutes of
// printing.
func TestReplDeepOutputIsBounded(t *testing.T) {
	r := runNotebook(t, t.TempDir(), "# %% a\nx = 1\n", Options{})
	nb, _ := ParseFile(r.e.NB.Path)
	e, err := Open(t.Context(), nb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	start := time.Now()
	outs, err := e.Eval("y = []\nfor i in range(1000000):\n    y = [y]\ny\n")
	if err == nil || !strings.Contains(err.Error(), "nested too deeply") || len(outs) != 1 || !strings.Contains(outs[0].String(), "not shown") {
		t.Fatalf("err %v, outputs %d", err, len(outs))
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}
