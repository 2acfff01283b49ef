package backendtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/runtime"
)

// stateful starts a handle and seeds it; its Resource must be there.
func stateful(t *testing.T, k Kind) (*session, *runtime.Resource) {
	s := newSession(t, k)
	h := s.start(k).(handle.Stateful)
	s.must(k.Seed)
	r := h.Resource()
	if r == nil {
		t.Fatalf("a %s started by Start is not tracked (Resource() is nil)", k.Name)
	}
	if h.StateID() != r.ID {
		t.Errorf("StateID() = %q, the resource's ID %q", h.StateID(), r.ID)
	}
	return s, r
}

// testState: the change detector stays quiet over a read and sees a write
// through h and one around it; in a notebook, resources.mark() names
// another state after a write than before it.
func testState(t *testing.T, k Kind) {
	s, r := stateful(t, k)
	before := s.eval(k.Read)
	// A busy server writes on its own now and then (PostgreSQL's
	// autovacuum): a read passes if one of three tries is quiet, while a
	// read counted as a change fails all three.
	quiet := false
	for range 3 {
		r.Mark()
		s.eval(k.Read)
		if quiet = !r.Moved(); quiet {
			break
		}
	}
	if !quiet {
		t.Errorf("a read (%s) counted as a change, three times", k.Read)
	}
	for _, w := range []struct{ what, src string }{{"a write through h", k.Write}, {"a write around h", k.WriteAround}} {
		if w.src == "" {
			continue
		}
		r.Mark()
		s.must(w.src)
		after := s.eval(k.Read)
		if eq, _ := starlark.Equal(after, before); eq {
			t.Errorf("%s (%s) left %s at %s: the test proves nothing", w.what, w.src, k.Read, after)
		}
		if !r.Moved() {
			t.Errorf("%s (%s) was not seen as a change", w.what, w.src)
		}
		before = after
	}
	n := runNotebook(t, k, `# %% state
m0 = resources.mark()
v0 = `+k.Read+`
`+k.Write+`
v1 = `+k.Read+`
m1 = resources.mark()
`)
	m0, m1 := n.value("state", "m0"), n.value("state", "m1")
	if m0 == "" || m0 == m1 || !strings.Contains(m0, "@") {
		t.Errorf("resources.mark() before and after a write: %s, %s", m0, m1)
	}
	if n.value("state", "v0") == n.value("state", "v1") {
		t.Errorf("the write left the data as it was: %s", n.value("state", "v0"))
	}
}

// testSnapshot: what Save took comes back on Load, after a write, and in
// a notebook resources.reset() to a mark brings the data of the mark back.
func testSnapshot(t *testing.T, k Kind) {
	s, r := stateful(t, k)
	before := s.eval(k.Read)
	dir := filepath.Join(t.TempDir(), "snap")
	if err := r.Save(dir, ""); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) == 0 {
		t.Errorf("Save left %s empty", dir)
	}
	s.must(k.Write)
	if k.WriteAround != "" {
		s.must(k.WriteAround)
	}
	if eq, _ := starlark.Equal(s.eval(k.Read), before); eq {
		t.Fatalf("the writes left %s as it was: the test proves nothing", k.Read)
	}
	if err := r.Load(dir); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if back := s.eval(k.Read); !equal(back, before) {
		t.Errorf("after Load, %s = %s, saved at %s", k.Read, back, before)
	}
	n := runNotebook(t, k, `# %% state
m0 = resources.mark()
v0 = `+k.Read+`
`+k.Write+`
resources.reset(m0)
v1 = `+k.Read+`
`)
	if v0, v1 := n.value("state", "v0"), n.value("state", "v1"); v0 == "" || v0 != v1 {
		t.Errorf("resources.reset(mark) gave back %s, the mark held %s", v1, v0)
	}
}

func equal(a, b starlark.Value) bool {
	eq, err := starlark.Equal(a, b)
	return err == nil && eq
}

// notebook is one run of a notebook through the engine.
type notebook struct {
	t      *testing.T
	e      *runtime.Engine
	stderr string
}

// runNotebook runs a notebook of a start cell (k's Vars and Start), a seed
// cell, and cells, in a fresh cache.
func runNotebook(t *testing.T, k Kind, cells string) *notebook {
	t.Helper()
	src := "# %% start\n" + vars(t, k) + k.Start + "\n\n"
	if k.Seed != "" {
		src += "# %% seed\n" + k.Seed + "\n\n"
	}
	return runSource(t, k, src+cells)
}

// runSource runs the notebook src with k's modules, in a fresh cache.
func runSource(t *testing.T, k Kind, src string) *notebook {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.star")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	var stderr strings.Builder
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: &stderr, Modules: k.Modules})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	e.Close()
	return &notebook{t: t, e: e, stderr: stderr.String()}
}

// value is str() of a global a cell defined; a cell's error fails the test.
func (n *notebook) value(cell, name string) string {
	n.t.Helper()
	st := n.e.CellRun(cell)
	if st == nil {
		n.t.Fatalf("no cell %s", cell)
	}
	if st.Err != nil {
		n.t.Fatalf("cell %s: %v\n%s", cell, st.Err, n.stderr)
	}
	v, ok := n.e.CellValues(st)[name]
	if !ok {
		n.t.Fatalf("cell %s defines no %s", cell, name)
	}
	return v.String()
}

// RowsNotebook fills a table from a parameter and counts it: -p rows=100
// leaves the cluster in another state than the default 200, so a rerun at
// the default must restore (or hit) the default's snapshot and show 200.
const RowsNotebook = `# %% params
rows = param("rows", 200)

# %% cluster
pg = backend.postgres()

# %% data
pg.exec("CREATE TABLE t (id int PRIMARY KEY)")
pg.exec("INSERT INTO t SELECT generate_series(1, %d)" % rows)

# %% measure
n = pg.query("SELECT count(*) AS n FROM t")[0]["n"]
n
`
