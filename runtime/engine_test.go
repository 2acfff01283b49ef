package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// nbRun is one run of a notebook in a test.
type nbRun struct {
	e       *Engine
	stderr  strings.Builder
	outputs map[string]string // cell -> its outputs joined
}

// runNotebook writes src to dir/nb.star (unless src is "") and runs it.
func runNotebook(t *testing.T, dir, src string, opts Options) *nbRun {
	t.Helper()
	path := filepath.Join(dir, "nb.star")
	if src != "" {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nb, err := ParseFile(path)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	r := &nbRun{outputs: map[string]string{}}
	opts.Stderr = &r.stderr
	opts.Modules = append(opts.Modules, testModule)
	e, err := Open(context.Background(), nb, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer e.Close()
	e.Run(true)
	r.e = e
	for _, c := range nb.Cells {
		if st := e.CellRun(c.Name); st != nil {
			var parts []string
			for _, o := range st.outputs {
				parts = append(parts, o.String())
			}
			r.outputs[c.Name] = strings.Join(parts, "|")
		}
	}
	return r
}

func (r *nbRun) status(name string) Status {
	if st := r.e.CellRun(name); st != nil {
		return st.Status
	}
	return "none"
}

const basicNB = `# %% [markdown]
# # Title here
# prose

# %% setup
n = param("n", 3)
data = [i * i for i in range(n)]

# %% total
print("summing", len(data))
total = 0
for x in data:
    total += x
total

# %% fn
def double(x):
    return 2 * x

# %% use
double(total)
`

func TestRunThenAllHits(t *testing.T) {
	dir := t.TempDir()
	r1 := runNotebook(t, dir, basicNB, Options{})
	for name, want := range map[string]Status{"setup": "ran", "total": "ran", "fn": "live", "use": "ran"} {
		if got := r1.status(name); got != want {
			t.Errorf("first run: %s is %s, want %s\n%s", name, got, want, r1.stderr.String())
		}
	}
	if got := r1.outputs["total"]; got != "summing 3\n|5" {
		t.Errorf("total outputs = %q", got)
	}
	if got := r1.outputs["use"]; got != "10" {
		t.Errorf("use outputs = %q", got)
	}
	r2 := runNotebook(t, dir, "", Options{})
	for name, want := range map[string]Status{"setup": "hit", "total": "hit", "fn": "live", "use": "hit"} {
		if got := r2.status(name); got != want {
			t.Errorf("second run: %s is %s, want %s", name, got, want)
		}
	}
	if r2.outputs["total"] != r1.outputs["total"] || r2.outputs["use"] != r1.outputs["use"] {
		t.Errorf("cached outputs differ: %v vs %v", r2.outputs, r1.outputs)
	}
	if r2.e.CellRun("fn").Executed {
		t.Error("live cell fn executed although nothing downstream was stale")
	}
}

func TestCommentsDoNotChangeKeys(t *testing.T) {
	dir := t.TempDir()
	runNotebook(t, dir, basicNB, Options{})
	edited := strings.Replace(basicNB, "total = 0\n", "# a new comment\ntotal = 0  # trailing\n\n", 1)
	edited = strings.Replace(edited, "# prose", "# other prose", 1)
	r := runNotebook(t, dir, edited, Options{})
	if got := r.status("total"); got != "hit" {
		t.Errorf("total after comment edit: %s (%s)", got, r.e.CellRun("total").Why)
	}
}

func TestLiveCellRunsWhenNeeded(t *testing.T) {
	dir := t.TempDir()
	runNotebook(t, dir, basicNB, Options{})
	r := runNotebook(t, dir, strings.Replace(basicNB, "double(total)", "double(total) + 1", 1), Options{})
	if !r.e.CellRun("fn").Executed || r.status("use") != "ran" || r.outputs["use"] != "11" {
		t.Errorf("fn executed=%v use=%s %q", r.e.CellRun("fn").Executed, r.status("use"), r.outputs["use"])
	}
	if r.e.CellRun("total").Executed {
		t.Error("total re-executed although only use changed")
	}
}

func TestParamChangesKey(t *testing.T) {
	dir := t.TempDir()
	runNotebook(t, dir, basicNB, Options{})
	r := runNotebook(t, dir, "", Options{Params: map[string]string{"n": "4"}})
	if r.status("setup") != "ran" || r.outputs["total"] != "summing 4\n|14" {
		t.Errorf("setup %s, total %q", r.status("setup"), r.outputs["total"])
	}
	if why := r.e.CellRun("setup").Why; !strings.Contains(why, "param n") {
		t.Errorf("why = %q, want it to name param n", why)
	}
	back := runNotebook(t, dir, "", Options{})
	if back.status("setup") != "hit" {
		t.Errorf("back to the default: setup %s", back.status("setup"))
	}
}

func TestBadParamType(t *testing.T) {
	r := runNotebook(t, t.TempDir(), basicNB, Options{Params: map[string]string{"n": "many"}})
	st := r.e.CellRun("setup")
	if st.Status != StatusError || !strings.Contains(st.Err.Error(), "want an int") {
		t.Fatalf("status %s err %v", st.Status, st.Err)
	}
	if r.status("total") != "skipped" || r.status("fn") != "live" {
		t.Errorf("total %s (want skipped), fn %s (independent, want live)", r.status("total"), r.status("fn"))
	}
}

func TestRuntimeErrorPositionAndSkips(t *testing.T) {
	src := "# %% a\nx = 1\n\n# %% b\ny = x + {}[\"missing\"]\n\n# %% c\nz = y\n\n# %% d\nw = x + 1\nw\n"
	r := runNotebook(t, t.TempDir(), src, Options{})
	st := r.e.CellRun("b")
	if st.Status != StatusError || !strings.Contains(st.Trace, "nb.star:5:") || !strings.Contains(st.Err.Error(), "in cell b") {
		t.Errorf("b: %s %v\n%s", st.Status, st.Err, st.Trace)
	}
	if r.status("c") != "skipped" || r.status("d") != "ran" || r.outputs["d"] != "2" {
		t.Errorf("c %s d %s %q", r.status("c"), r.status("d"), r.outputs["d"])
	}
	if !r.e.Failed() {
		t.Error("Failed() = false")
	}
}

func TestStaticErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"syntax", "# %% a\nx = 1\n# %% b\ny = (1 +\n", "nb.star:5:1: got end of file, want primary expression (in cell b)"},
		{"dup", "# %% a\nx = 1\n# %% b\nx = 2\n", `"x" is defined in cell a and again in cell b`},
		{"undefined", "# %% a\nx = nope + 1\n", "nb.star:2:5: undefined: nope (in cell a)"},
		{"private", "# %% data\n_day = 3\n# %% runs\nx = _day + 1\n", "nb.star:4:5: undefined: _day (in cell runs): names starting with _ are private to their cell, and cell data (line 2) defines _day: drop the _ there to share it"},
		{"loop-var", "# %% data\nfor day in range(3):\n    pass\n# %% runs\nx = day + 1\n", "nb.star:5:5: undefined: day (in cell runs): a top-level loop variable is private to its cell, and cell data (line 2) loops over day: assign it to a name of its own there to share it"},
		{"cycle", "# %% a\nx = y\n# %% b\ny = x\n", "nb.star:2:5: cells depend on each other in a cycle: a reads y from b (line 2), b reads x from a (line 4)"},
		{"cycle-with-bystander", "# %% c\nz = x\n# %% a\nx = y\n# %% b\ny = x\n", "nb.star:4:5: cells depend on each other in a cycle: a reads y from b (line 4), b reads x from a (line 6)"},
		{"nul", "# %% a\nx = 1\n# %% b\ny = 2 \x00\nfail(\"never\")\n", "nb.star:4:7: NUL byte in the code (in cell b)"},
		{"nul-in-comment", "# %% a\nx = 1 # \x00\nfail(\"never\")\n", "nb.star:2:9: NUL byte"},
		{"stray-backslash", "# %% a\nx = 1\n\n\n\nx \\ 1\n", "nb.star:6:3: stray backslash in program (in cell a)"},
		{"old-octal", "# %% a\nx = 012\n", "nb.star:2:5: obsolete form of octal literal"},
		{"dup-name", "# %% a\nx = 1\n# %% a\ny = 2\n", `cell name "a" already used`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nb.star")
			os.WriteFile(path, []byte(tc.src), 0o644)
			nb, err := ParseFile(path)
			if err == nil {
				var e *Engine
				e, err = Open(context.Background(), nb, Options{})
				if e != nil {
					e.Close()
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFileInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "data.txt"), []byte("abc"), 0o644)
	src := "# %% read\nn = len(file(\"data.txt\"))\nn\n"
	runNotebook(t, dir, src, Options{})
	if r := runNotebook(t, dir, "", Options{}); r.status("read") != "hit" {
		t.Fatalf("unchanged file: %s", r.status("read"))
	}
	os.WriteFile(filepath.Join(dir, "data.txt"), []byte("abcdef"), 0o644)
	r := runNotebook(t, dir, "", Options{})
	if r.status("read") != "ran" || r.outputs["read"] != "6" || !strings.Contains(r.e.CellRun("read").Why, "input changed: file") {
		t.Errorf("changed file: %s %q %q", r.status("read"), r.outputs["read"], r.e.CellRun("read").Why)
	}
	// Back to the first content: that execution is still in the cache.
	os.WriteFile(filepath.Join(dir, "data.txt"), []byte("abc"), 0o644)
	if r := runNotebook(t, dir, "", Options{}); r.status("read") != "hit" || r.outputs["read"] != "3" {
		t.Errorf("file changed back: %s %q", r.status("read"), r.outputs["read"])
	}
	if r := runNotebook(t, dir, "", Options{}); r.status("read") != "hit" || r.outputs["read"] != "3" {
		t.Errorf("file changed back, second run: %s %q", r.status("read"), r.outputs["read"])
	}
	os.WriteFile(filepath.Join(dir, "data.txt"), []byte("abcdef"), 0o644)
	if r := runNotebook(t, dir, "", Options{}); r.status("read") != "hit" || r.outputs["read"] != "6" {
		t.Errorf("second content again: %s %q", r.status("read"), r.outputs["read"])
	}
}

func TestRerunForces(t *testing.T) {
	dir := t.TempDir()
	runNotebook(t, dir, basicNB, Options{})
	r := runNotebook(t, dir, "", Options{Rerun: []string{"total"}})
	if r.status("total") != "ran" || r.status("setup") != "hit" || r.status("use") != "hit" {
		t.Errorf("setup %s total %s use %s", r.status("setup"), r.status("total"), r.status("use"))
	}
	// The reason names the flag as it is spelt (it said "--rerun").
	if why := r.e.CellRun("total").Why; why != "forced (-rerun total)" {
		t.Errorf("reason %q, want %q", why, "forced (-rerun total)")
	}
	r = runNotebook(t, dir, "", Options{RerunAll: true})
	if why := r.e.CellRun("setup").Why; why != "forced (-rerun-all)" {
		t.Errorf("reason %q, want %q", why, "forced (-rerun-all)")
	}
}

func TestDamagedEntryIsRecomputed(t *testing.T) {
	dir := t.TempDir()
	r1 := runNotebook(t, dir, basicNB, Options{})
	path := r1.e.store.entryPath(r1.e.CellRun("total").Key)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-5] ^= 0x20
	os.WriteFile(path, data, 0o644)
	r2 := runNotebook(t, dir, "", Options{})
	if r2.status("total") != "ran" || !strings.Contains(r2.stderr.String(), "checksum mismatch") {
		t.Errorf("total %s; stderr:\n%s", r2.status("total"), r2.stderr.String())
	}
	os.Truncate(path, 10)
	if r3 := runNotebook(t, dir, "", Options{}); r3.status("total") != "ran" {
		t.Errorf("truncated entry: total %s", r3.status("total"))
	}
	// What a power cut can leave of an entry written without fsync (its
	// name on disk, its data not): nothing, or zeros where the data was.
	data, _ = os.ReadFile(path)
	for what, damaged := range map[string][]byte{"empty": nil, "zeros": make([]byte, len(data))} {
		os.WriteFile(path, damaged, 0o644)
		if r := runNotebook(t, dir, "", Options{}); r.status("total") != "ran" || !strings.Contains(r.stderr.String(), "damaged") {
			t.Errorf("%s entry: total %s; stderr:\n%s", what, r.status("total"), r.stderr.String())
		}
	}
}

// calls counts executions of tick(name) across runs in a test.
var calls = map[string]int{}

// testModule is what the tests' notebooks see beside Core: emit(v),
// tick(name), which counts its calls, and calls_of(name), that count.
var testModule = Module{Name: "runtime_test", Globals: starlark.StringDict{
	"emit": starlark.NewBuiltin("emit", func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		Emit(th, args[0])
		return starlark.None, nil
	}),
	"calls_of": starlark.NewBuiltin("calls_of", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var name string
		if err := starlark.UnpackArgs(b.Name(), args, kw, "name", &name); err != nil {
			return nil, err
		}
		return starlark.MakeInt(calls[name]), nil
	}),
	"tick": starlark.NewBuiltin("tick", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var name string
		if err := starlark.UnpackArgs(b.Name(), args, kw, "name", &name); err != nil {
			return nil, err
		}
		calls[name]++
		return starlark.MakeInt(calls[name]), nil
	}),
}}

func TestMemoResumesAfterFailure(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "fail.txt")
	os.WriteFile(flag, []byte("yes"), 0o644)
	src := `# %% runs
def _one(i):
    return lambda: [i, tick("memo-run-%d" % i)]
results = [memo("run/%d" % i, _one(i)) for i in range(3)]
if file("fail.txt") == "yes":
    fail("stop after the checkpoints")
results
`
	r1 := runNotebook(t, dir, src, Options{})
	if r1.status("runs") != "error" {
		t.Fatalf("first run: %s", r1.status("runs"))
	}
	os.WriteFile(flag, []byte("no"), 0o644)
	r2 := runNotebook(t, dir, "", Options{})
	if r2.status("runs") != "ran" {
		t.Fatalf("second run: %s %v", r2.status("runs"), r2.e.CellRun("runs").Err)
	}
	for i := range 3 {
		if n := calls["memo-run-"+string(rune('0'+i))]; n != 1 {
			t.Errorf("run %d executed %d times, want 1 (memo should resume)", i, n)
		}
	}
	if r2.outputs["runs"] != "[[0, 1], [1, 1], [2, 1]]" {
		t.Errorf("outputs %q", r2.outputs["runs"])
	}
}

func TestLoopVariablesStayLocal(t *testing.T) {
	src := "# %% a\ntotal = 0\nfor x in [1, 2]:\n    total += x\n\n# %% b\nn = 0\nfor x in [3]:\n    n += x\nn + total\n"
	r := runNotebook(t, t.TempDir(), src, Options{})
	if r.status("b") != "ran" || r.outputs["b"] != "6" {
		t.Fatalf("b: %s %q %v", r.status("b"), r.outputs["b"], r.e.CellRun("b").Err)
	}
	if d := r.e.CellRun("a").Def.Defines; strings.Join(d, ",") != "total" {
		t.Errorf("a defines %v, want [total]", d)
	}
}

func TestEmittedLastValueShownOnce(t *testing.T) {
	r := runNotebook(t, t.TempDir(), "# %% a\ndef _f():\n    x = struct(k = 1)\n    emit(x)\n    return x\n_f()\n", Options{})
	if got := r.outputs["a"]; strings.Count(got, "struct(") != 1 {
		t.Errorf("outputs %q: the value shown and returned should appear once", got)
	}
}

// syncBuffer is a strings.Builder safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSecondRunWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.star")
	os.WriteFile(path, []byte("# %% a\nx = 1\n"), 0o644)
	nb, _ := ParseFile(path)
	first, err := Open(context.Background(), nb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var msg syncBuffer
	opened := make(chan *Engine)
	go func() {
		second, err := Open(context.Background(), nb, Options{Stderr: &msg})
		if err != nil {
			t.Error(err)
		}
		opened <- second
	}()
	select {
	case <-opened:
		t.Fatal("second engine opened while the first held the lock")
	case <-time.After(300 * time.Millisecond):
	}
	if !strings.Contains(msg.String(), "held by pid") {
		t.Errorf("the waiting run does not say who holds the lock: %q", msg.String())
	}
	first.Close()
	select {
	case second := <-opened:
		second.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("second engine still waiting after the first closed")
	}
}

// TestCleanKeepsWhatTheNotebookUses: clean removes the entries of code that
// is gone and keeps every variant of the entries the notebook still uses.
func TestCleanKeepsWhatTheNotebookUses(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.txt")
	os.WriteFile(data, []byte("abc"), 0o644)
	nb := "# %% read\nn = len(file(\"data.txt\"))\nn\n\n# %% plain\nk = 1\nk\n"
	runNotebook(t, dir, nb, Options{})
	os.WriteFile(data, []byte("abcdef"), 0o644)
	runNotebook(t, dir, "", Options{})
	r := runNotebook(t, dir, strings.Replace(nb, "k = 1", "k = 2", 1), Options{})
	res, err := r.e.Clean()
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != 1 {
		t.Errorf("clean removed %d entries, want 1 (plain's old code)", res.Entries)
	}
	os.WriteFile(data, []byte("abc"), 0o644)
	if r := runNotebook(t, dir, "", Options{}); r.status("read") != "hit" || r.status("plain") != "hit" || r.outputs["read"] != "3" {
		t.Errorf("after clean: read %s %q, plain %s", r.status("read"), r.outputs["read"], r.status("plain"))
	}
}

// TestLostDisplayWarns: a figure or table made by an expression statement
// that is not the cell's last is dropped; the cell says so.
func TestLostDisplayWarns(t *testing.T) {
	dir := t.TempDir()
	helpers := "# %% helpers\ndef table(rows):\n    return rows\n\ndef md(s):\n    return s\n\ndef show(*a):\n    return a\n\n"
	r := runNotebook(t, dir, helpers+"# %% a\ntable([{\"x\": 1}])\nn = 1\nmd(\"last\")\n\n# %% b\nshow(md(\"one\"), md(\"two\"))\nmd(\"three\")\n", Options{})
	w := r.e.CellRun("a").warnings
	if len(w) != 1 || !strings.Contains(w[0], "line 12: the value of table(...) is not displayed") {
		t.Errorf("cell a warnings: %q", w)
	}
	if w := r.e.CellRun("b").warnings; len(w) != 0 {
		t.Errorf("cell b: show(...) displays, yet warnings %q", w)
	}
}

// TestNotebooksShareADirectory: two notebooks beside each other keep their
// own caches: cleaning one leaves the other's entries, and each explains
// its own misses.
func TestNotebooksShareADirectory(t *testing.T) {
	dir := t.TempDir()
	open := func(name, src string) *Engine { return openNamed(t, dir, name, src) }
	a := open("a.star", "# %% total\ntotal = 1\ntotal\n")
	a.Run(true)
	a.Close()
	b := open("b.star", "# %% total\ntotal = 2\ntotal\n")
	b.Run(true)
	if why := b.CellRun("total").Why; why != "no entry in the cache" {
		t.Errorf("b's first run explains its miss with a's memory: %q", why)
	}
	if _, err := b.Clean(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	a = open("a.star", "")
	a.Run(true)
	if st := a.CellRun("total"); st.Status != StatusHit {
		t.Errorf("after cleaning b, a's cell is %s (%s)", st.Status, st.Why)
	}
}

// A memo checkpoint's fingerprint covers the strings its function closes
// over (here a DSN with its password): it is keyed under the cache's salt,
// so one notebook in two caches (the first moved aside) names its
// checkpoints differently, while one cache names them the same from run to
// run.
func TestMemoFingerprintSalted(t *testing.T) {
	src := "# %% conn\ndsn = param(\"dsn\", \"none\")\n\n# %% use\ndef _mk(d):\n    return lambda: len(d)\nr = memo(\"k\", _mk(dsn))\nr\n"
	params := map[string]string{"dsn": "postgres://u:Fp1ngerPw@h/db"}
	names := func(cache string) map[string]bool {
		out := map[string]bool{}
		filepath.WalkDir(filepath.Join(cache, "nb", "v1", "memo"), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out[d.Name()] = true
			}
			return nil
		})
		return out
	}
	dir := t.TempDir()
	cache, moved := filepath.Join(dir, ".benchbook"), filepath.Join(dir, "first-cache")
	runNotebook(t, dir, src, Options{Params: params})
	first := names(cache)
	runNotebook(t, dir, "", Options{Params: params})
	if again := names(cache); len(first) == 0 || len(again) != len(first) {
		t.Fatalf("one cache, two runs: checkpoints %v, then %v", first, again)
	}
	if err := os.Rename(cache, moved); err != nil {
		t.Fatal(err)
	}
	runNotebook(t, dir, "", Options{Params: params})
	for n := range names(cache) {
		if first[n] {
			t.Errorf("checkpoint %s has the same name in two caches: its fingerprint is not salted", n)
		}
	}
}

// TestNestedMemoBelongsToItsOuter: a checkpoint taken inside another's
// function belongs to it. A design that checkpoints each of its runs
// (capacity's levels) inside a design that checkpoints each of its own
// (abab's pairs) makes inner checkpoints with the same key and the same
// function in every pair; keyed alone, pair 2 would be served pair 1's
// measurement (here the inner function sees nothing of the pair, as
// capacity's run sees only its arm). Keyed under their outer checkpoint,
// each pair measures its own, and an interrupted pair still resumes at its
// first unfinished inner run.
func TestNestedMemoBelongsToItsOuter(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "fail.txt")
	os.WriteFile(flag, []byte("yes"), 0o644)
	src := `# %% runs
def _level(level):
    if level == 1 and calls_of("level-0") == 2 and file("fail.txt") == "yes":
        fail("interrupted in pair 1")
    return tick("level-%d" % level)
def _search():
    return [memo("level/%d" % level, lambda: _level(level)) for level in range(2)]
results = [memo("pair/%d" % pair, _search) for pair in range(2)]
results
`
	r1 := runNotebook(t, dir, src, Options{})
	if r1.status("runs") != "error" {
		t.Fatalf("first run: %s", r1.status("runs"))
	}
	if calls["level-0"] != 2 || calls["level-1"] != 1 {
		t.Fatalf("first run measured level 0 %d times, level 1 %d times; want 2 and 1 (one per pair)", calls["level-0"], calls["level-1"])
	}
	os.WriteFile(flag, []byte("no"), 0o644)
	r2 := runNotebook(t, dir, "", Options{})
	if r2.status("runs") != "ran" {
		t.Fatalf("second run: %s %v", r2.status("runs"), r2.e.CellRun("runs").Err)
	}
	// Pair 1 resumes: its level 0 is kept, its level 1 measured now.
	if calls["level-0"] != 2 || calls["level-1"] != 2 {
		t.Errorf("after resuming, level 0 measured %d times, level 1 %d; want 2 and 2", calls["level-0"], calls["level-1"])
	}
	if r2.outputs["runs"] != "[[1, 1], [2, 2]]" {
		t.Errorf("outputs %q: each pair must hold its own measurements", r2.outputs["runs"])
	}
}
