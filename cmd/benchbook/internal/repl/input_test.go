package repl

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime"
)

func TestCompleter(t *testing.T) {
	c := &completer{
		globals: func() []string { return []string{"answer", "another", "base"} },
		cells:   func() []string { return []string{"setup", "slow", "verdict"} },
		values:  builtinValues(nil),
	}
	cases := []struct {
		line    string
		want    []string
		wantLen int
	}{
		{":ru", []string{"n"}, 3},
		{":show s", []string{"etup", "low"}, 1},
		{"x = an", []string{"other", "swer", "y"}, 2},
		{"le", []string{"n"}, 2},
		{":quit x", nil, 0},
	}
	for _, tc := range cases {
		got, n := c.Do([]rune(tc.line), len([]rune(tc.line)))
		var gotS []string
		for _, g := range got {
			gotS = append(gotS, string(g))
		}
		if strings.Join(gotS, "|") != strings.Join(tc.want, "|") || n != tc.wantLen {
			t.Errorf("complete %q = %q, %d; want %q, %d", tc.line, gotS, n, tc.want, tc.wantLen)
		}
	}
}

// TestInterrupts: SIGINT cancels the running input, or calls idle when
// nothing runs; it never ends the process.
func TestInterrupts(t *testing.T) {
	idle := make(chan struct{}, 1)
	in := watchInterrupts(func() { idle <- struct{}{} }, func() {})
	defer in.stop()
	in.run(context.Background(), func(ctx context.Context) {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Error("SIGINT did not cancel the running input")
		}
	})
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-idle:
	case <-time.After(5 * time.Second):
		t.Error("SIGINT at the prompt did not reach the idle handler")
	}
}

func TestPlainReader(t *testing.T) {
	r := newPlainReader(strings.NewReader("a\nb"))
	for _, want := range []string{"a", "b"} {
		if got, err := r.ReadLine(""); got != want || err != nil {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := r.ReadLine(""); err != io.EOF {
		t.Fatalf("at the end: %v, want EOF", err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	blocked := newPlainReader(pr)
	go func() { time.Sleep(50 * time.Millisecond); blocked.Close() }()
	if _, err := blocked.ReadLine(""); err != io.EOF {
		t.Fatalf("after Close: %v, want EOF", err)
	}
}

const peekNotebook = `# %% stats
tps = struct(mean = 1.5, median = 1.2, max = 9)

# %% never
slow = fail("completion must not run this cell")
`

// TestCompleterAttributes: tps.me<Tab> completes the attributes of a value
// that is at hand (computed or cached), and never runs a cell to find out.
func TestCompleterAttributes(t *testing.T) {
	nb := writeNotebook(t, peekNotebook)
	e, err := openNotebook(t, nb)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.RunCell("stats", runtime.RunIfStale); err != nil {
		t.Fatal(err)
	}
	c := &completer{globals: e.Globals, cells: func() []string { return nil }, values: builtinValues(nil), peek: e.Peek}
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

// openNotebook opens the notebook at path with an engine of no modules.
func openNotebook(t *testing.T, path string) (*runtime.Engine, error) {
	nb, err := runtime.ParseFile(path)
	if err != nil {
		return nil, err
	}
	return runtime.Open(context.Background(), nb, runtime.Options{Stderr: io.Discard})
}

func writeNotebook(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nb.star")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
