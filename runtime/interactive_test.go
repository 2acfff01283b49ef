package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openTest(t *testing.T, dir, src string) *Engine {
	t.Helper()
	return openNamed(t, dir, "nb.star", src)
}

// openNamed opens dir/name, first writing src there unless it is "".
func openNamed(t *testing.T, dir, name, src string) *Engine {
	t.Helper()
	path := filepath.Join(dir, name)
	if src != "" {
		os.WriteFile(path, []byte(src), 0o644)
	}
	nb, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), nb, Options{Modules: []Module{testModule}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func TestEvalComputesOnFirstUse(t *testing.T) {
	e := openTest(t, t.TempDir(), "# %% a\nx = tick(\"eval-a\")\n\n# %% b\ny = x + 10\n\n# %% c\nz = tick(\"eval-c\")\n")
	e.Plan()
	out, err := e.Eval("y * 2")
	if err != nil || len(out) != 1 || out[0].String() != "22" {
		t.Fatalf("y*2 = %v, %v", out, err)
	}
	if calls["eval-c"] != 0 {
		t.Error("cell c ran although the input did not read z")
	}
	if _, err := e.Eval("def f(n):\n    return n + y\n"); err != nil {
		t.Fatal(err)
	}
	out, err = e.Eval("f(1)")
	if err != nil || out[0].String() != "12" {
		t.Fatalf("f(1) = %v, %v", out, err)
	}
	if err := e.RunCell("a", RunForced); err != nil {
		t.Fatal(err)
	}
	if calls["eval-a"] != 2 {
		t.Errorf("forced run: a executed %d times, want 2", calls["eval-a"])
	}
	e.Plan()
	if st := e.CellRun("b"); st.Status != StatusStale {
		t.Errorf("after forcing a (new value), b is %s, want stale", st.Status)
	}
}

func TestReloadListsChangedCells(t *testing.T) {
	dir := t.TempDir()
	src := "# %% a\nx = 1\n\n# %% b\ny = x + 1\n\n# %% c\nz = 3\n"
	e := openTest(t, dir, src)
	e.Run(true)
	path := filepath.Join(dir, "nb.star")
	os.WriteFile(path, []byte(strings.Replace(src, "x + 1", "x + 2", 1)), 0o644)
	nb, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := e.Reload(nb)
	if err != nil || strings.Join(ed.Changed, ",") != "b" || strings.Join(ed.Edited, ",") != "b" {
		t.Fatalf("edit = %+v, %v", ed, err)
	}
	e.Run(true)
	if e.CellRun("a").Executed || !e.CellRun("b").Executed || e.CellRun("c").Executed {
		t.Errorf("executed: a=%v b=%v c=%v, want only b", e.CellRun("a").Executed, e.CellRun("b").Executed, e.CellRun("c").Executed)
	}
}

// Reload tells what the user did (edited a, removed c, added d) apart from
// what follows from it (b's key changes because a's value does).
func TestReloadTellsEditsFromConsequences(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir, "# %% a\nx = 1\n\n# %% b\ny = x + 1\n\n# %% c\nz = 3\n")
	e.Run(true)
	path := filepath.Join(dir, "nb.star")
	os.WriteFile(path, []byte("# %% a\nx = 5\n\n# %% b\ny = x + 1\n\n# %% d\nw = 4\n"), 0o644)
	nb, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := e.Reload(nb)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("edited %v added %v removed %v changed %v", ed.Edited, ed.Added, ed.Removed, ed.Changed)
	if want := "edited [a] added [d] removed [c] changed [a b d]"; got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
}

func TestEvalSeesReloadedValues(t *testing.T) {
	dir := t.TempDir()
	src := "# %% a\nanswer = 42\n"
	e := openTest(t, dir, src)
	e.Plan()
	if out, err := e.Eval("answer"); err != nil || out[0].String() != "42" {
		t.Fatalf("answer = %v, %v", out, err)
	}
	if _, err := e.Eval("mine = answer + 1"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "nb.star")
	os.WriteFile(path, []byte("# %% a\nanswer = 43\n"), 0o644)
	nb, _ := ParseFile(path)
	if _, err := e.Reload(nb); err != nil {
		t.Fatal(err)
	}
	out, err := e.Eval("(answer, mine)")
	if err != nil || out[0].String() != "(43, 43)" {
		t.Fatalf("after reload: %v, %v (want the new answer and the REPL's own mine)", out, err)
	}
}

// Definer and Dependents answer from the engine's graph; cells may read
// names defined further down the file.
func TestDefinerAndDependents(t *testing.T) {
	dir := t.TempDir()
	src := "# %% late\nz = y + 1\n\n# %% a\nx = 1\n\n# %% b\ny = x + 1\n\n# %% other\nw = 2\n"
	r := runNotebook(t, dir, src, Options{})
	if got := r.e.Definer("y"); got != "b" {
		t.Errorf("Definer(y) = %q", got)
	}
	if got := r.e.Definer("nope"); got != "" {
		t.Errorf("Definer(nope) = %q", got)
	}
	if got := strings.Join(r.e.Dependents("a"), ","); got != "late,b" {
		t.Errorf("Dependents(a) = %s, want late,b (file order)", got)
	}
	if got := r.e.Dependents("other"); len(got) != 0 {
		t.Errorf("Dependents(other) = %v", got)
	}
}

// Every status constant is a Status (a const block that types only its
// first name leaves the others plain strings, so x := StatusRan is a string).
func TestStatusesAreTyped(t *testing.T) {
	for _, s := range []any{StatusHit, StatusRan, StatusLive, StatusError, StatusSkipped, StatusNever, StatusStale} {
		if _, ok := s.(Status); !ok {
			t.Errorf("%v is a %T, not a Status", s, s)
		}
	}
}
