package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
)

// Inputs the key did not see (issue 47). Each test edits something between
// runs and compares the warm cache with a run on an empty cache.

// moduleNB loads lib.star, whose top level reads a parameter and a file and
// loads lib2.star, which reads another parameter, from three cells: before,
// only the first cell to load a module recorded what its top level read.
const moduleNB = `# %% a
load("lib.star", "N", "DATA", "M")
a = [N, DATA, M]
a

# %% b
load("lib.star", "N", "DATA", "M")
b = [N, DATA, M, "b"]
b

# %% c
load("lib2.star", "M")
c = [M, "c"]
c
`

// moduleEdits are the edits of TestModuleInputsReachEveryLoader: parameters
// and data.txt's content, in turn.
var moduleEdits = []struct {
	params map[string]string
	data   string
}{
	{map[string]string{}, "x"},
	{map[string]string{"n": "2"}, "x"},
	{map[string]string{"n": "2"}, "yy"},
	{map[string]string{"n": "2", "m": "3"}, "yy"},
	{map[string]string{"m": "3"}, "yy"},
	{map[string]string{}, "x"},
}

func writeModules(t *testing.T, dir, data string) {
	t.Helper()
	for name, src := range map[string]string{
		"lib.star":  "load(\"lib2.star\", _M = \"M\")\nM = _M\nN = param(\"n\", 1)\nDATA = file(\"data.txt\")\n",
		"lib2.star": "M = param(\"m\", 1)\n",
		"data.txt":  data,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestModuleInputsReachEveryLoader: a module's top-level param() and file()
// are inputs of every cell that loads it, directly or through another
// module, not only of the first cell whose run evaluated it.
func TestModuleInputsReachEveryLoader(t *testing.T) {
	warm := t.TempDir()
	for i, ed := range moduleEdits {
		writeModules(t, warm, ed.data)
		cold := t.TempDir()
		writeModules(t, cold, ed.data)
		want := runNotebook(t, cold, moduleNB, Options{Params: ed.params})
		got := runNotebook(t, warm, moduleNB, Options{Params: ed.params})
		for _, cell := range []string{"a", "b", "c"} {
			if want.status(cell) != StatusRan {
				t.Fatalf("edit %d: the empty cache's run of %s: %s %v", i, cell, want.status(cell), want.e.CellRun(cell).Err)
			}
			if got.outputs[cell] != want.outputs[cell] {
				t.Fatalf("edit %d (%v, data %q): cell %s shows %q (%s: %s) on the warm cache, %q on an empty one",
					i, ed.params, ed.data, cell, got.outputs[cell], got.status(cell), got.e.CellRun(cell).Why, want.outputs[cell])
			}
		}
	}
}

// TestModuleInputsInOneSession: in one session (the REPL, watch, the
// kernel) a module whose top-level inputs changed is evaluated again: the
// cell that reruns must not get the module's old values.
func TestModuleInputsInOneSession(t *testing.T) {
	dir := t.TempDir()
	writeModules(t, dir, moduleEdits[0].data)
	e := openTest(t, dir, moduleNB)
	for i, ed := range moduleEdits {
		writeModules(t, dir, ed.data)
		e.SetParams(ed.params)
		e.Run(true)
		cold := t.TempDir()
		writeModules(t, cold, ed.data)
		want := runNotebook(t, cold, moduleNB, Options{Params: ed.params})
		for _, cell := range []string{"a", "b", "c"} {
			st := e.CellRun(cell)
			var parts []string
			for _, o := range st.outputs {
				parts = append(parts, o.String())
			}
			if got := strings.Join(parts, "|"); got != want.outputs[cell] {
				t.Fatalf("edit %d (%v, data %q): cell %s shows %q (%s: %s) in the session, %q on an empty cache",
					i, ed.params, ed.data, cell, got, st.Status, st.Why, want.outputs[cell])
			}
		}
	}
}

// TestCheckpointSeesLiveUpstream: memo's function calls the function of a
// live cell, whose file changed. The live cell reran and so did the memo
// cell (its key holds the live cell's inputs), but the checkpoint's
// fingerprint named the live cell by its key alone, and the old result came
// back.
func TestCheckpointSeesLiveUpstream(t *testing.T) {
	src := "# %% setup\nfactor = int(file(\"in.txt\"))\ndef scaled(x):\n    return x * factor\n\n# %% use\ny = memo(\"k\", lambda: scaled(2))\ny\n"
	warm := t.TempDir()
	for i, content := range []string{"2", "3", "2", "44"} {
		os.WriteFile(filepath.Join(warm, "in.txt"), []byte(content), 0o644)
		cold := t.TempDir()
		os.WriteFile(filepath.Join(cold, "in.txt"), []byte(content), 0o644)
		want := runNotebook(t, cold, src, Options{}).outputs["use"]
		got := runNotebook(t, warm, src, Options{})
		if got.outputs["use"] != want {
			t.Fatalf("edit %d (in.txt = %q): warm cache shows %q (%s), empty cache %q", i, content, got.outputs["use"], got.e.CellRun("use").Why, want)
		}
	}
}

// served is what serve(v) last put behind its one address: a server a
// live cell starts, whose address says nothing of what it runs.
var served starlark.Value = starlark.None

// serverModule is serve(v) -> "mem://srv", and ask(address) -> v.
var serverModule = Module{Name: "runtime_test_server", Globals: starlark.StringDict{
	"serve": starlark.NewBuiltin("serve", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		served = args[0]
		return starlark.String("mem://srv"), nil
	}),
	"ask": starlark.NewBuiltin("ask", func(_ *starlark.Thread, _ *starlark.Builtin, _ starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		return served, nil
	}),
}}

// TestCheckpointSeesWhatTheCellRead: the memoized function names only an
// address the cell took from a live value it reads (url = srv["url"], as
// url = srv.url of a process); what answers there changed with the live
// cell's input. The checkpoint holds the live values the cell reads, as
// its key does.
// A second case: the server started in the cell itself, before the call:
// the inputs the cell met so far are in the checkpoint's scope.
func TestCheckpointSeesWhatTheCellRead(t *testing.T) {
	for name, src := range map[string]string{
		"server in a live cell": "# %% server\nsrv = {\"url\": serve(int(file(\"in.txt\"))), \"stop\": lambda: None}\n\n" +
			"# %% runs\nurl = srv[\"url\"]\nr = memo(\"k\", lambda: ask(url))\nr\n",
		"server in the cell": "# %% runs\nurl = serve(int(file(\"in.txt\")))\nr = memo(\"k\", lambda: ask(url))\nr\n",
	} {
		warm := t.TempDir()
		for i, content := range []string{"2", "3", "2"} {
			os.WriteFile(filepath.Join(warm, "in.txt"), []byte(content), 0o644)
			cold := t.TempDir()
			os.WriteFile(filepath.Join(cold, "in.txt"), []byte(content), 0o644)
			want := runNotebook(t, cold, src, Options{Modules: []Module{serverModule}}).outputs["runs"]
			got := runNotebook(t, warm, src, Options{Modules: []Module{serverModule}})
			if got.outputs["runs"] != want || want != content {
				t.Fatalf("%s, edit %d (in.txt = %q): warm cache shows %q (%s), empty cache %q", name, i, content, got.outputs["runs"], got.e.CellRun("runs").Why, want)
			}
		}
	}
}

// TestCheckpointsOutliveAParameter: a parameter read in the cell reaches
// the memoized function as a value, or not at all: -p pairs=2 -> 3 keeps
// the two runs measured, even with the parameter read in the same cell.
func TestCheckpointsOutliveAParameter(t *testing.T) {
	dir := t.TempDir()
	src := `# %% runs
pairs = param("pairs", 2)
def _one(i):
    return lambda: tick("pairs-%d" % i)
done = [memo("run/%d" % i, _one(i)) for i in range(pairs)]
done
`
	runNotebook(t, dir, src, Options{})
	r := runNotebook(t, dir, src, Options{Params: map[string]string{"pairs": "3"}})
	if r.status("runs") != StatusRan || r.outputs["runs"] != "[1, 1, 1]" {
		t.Errorf("pairs=3: %s %q", r.status("runs"), r.outputs["runs"])
	}
	for i, want := range []int{1, 1, 1} {
		if n := calls[fmt.Sprintf("pairs-%d", i)]; n != want {
			t.Errorf("run %d executed %d times, want %d", i, n, want)
		}
	}
}

// rewriteValue replaces the stored value of global name in the entry of
// the cell with key, recomputing the entry's checksum (what a hand edit
// with the right tool does); withHash rewrites the recorded hash too.
func rewriteValue(t *testing.T, e *Engine, key, name string, v starlark.Value, withHash bool) {
	t.Helper()
	paths, _ := filepath.Glob(e.store.entryPath(key) + "*")
	if len(paths) == 0 {
		t.Fatalf("no entry for key %s", key)
	}
	data, err := codec.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		var ent entry
		if err := readChecked(p, &ent); err != nil {
			t.Fatal(err)
		}
		ent.Values[name] = data
		if withHash {
			sum := sha256.Sum256(data)
			ent.Hashes[name] = hex.EncodeToString(sum[:])
		}
		os.Remove(p) // a variant is a hard link of the entry: write each anew
		if err := writeChecked(p, &ent); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEditedValueReachesDownstream: an entry's value rewritten by hand,
// checksum recomputed. Downstream keys chain the value they read, so a
// cell that reads it is never served beside a dependent computed from the
// old value: with the recorded hash left as it was, the entry no longer
// holds together and is recomputed (a run on an empty cache shows the
// same); with the hash rewritten too, the dependent is computed from the
// new value.
func TestEditedValueReachesDownstream(t *testing.T) {
	src := "# %% a\nx = 1\n\n# %% b\ny = x + 1\ny\n"
	want := runNotebook(t, t.TempDir(), src, Options{}).outputs
	for _, withHash := range []bool{false, true} {
		dir := t.TempDir()
		first := runNotebook(t, dir, src, Options{})
		rewriteValue(t, first.e, first.e.CellRun("a").Key, "x", starlark.MakeInt(5), withHash)
		got := runNotebook(t, dir, "", Options{})
		x := got.e.CellValues(got.e.CellRun("a"))["x"]
		n, _ := starlark.AsInt32(x)
		if y := got.outputs["b"]; x == nil || y != strconv.Itoa(n+1) {
			t.Errorf("withHash %v: a holds %v, b shows %q (%s): not computed from it", withHash, x, y, got.status("b"))
		}
		if !withHash {
			if !maps.Equal(got.outputs, want) || !strings.Contains(got.stderr.String(), "damaged") {
				t.Errorf("value rewritten, hash kept: %v (a %s, b %s), an empty cache %v; stderr:\n%s",
					got.outputs, got.status("a"), got.status("b"), want, got.stderr.String())
			}
			continue
		}
		if x == nil || x.String() != "5" {
			t.Errorf("value and hash rewritten: a holds %v, want the 5 written", x)
		}
	}
}

// TestRunAgainResumesCheckpoints: the REPL's :run NAME (RunAgain) runs a
// cell whose checkpoints hold without redoing them: it threw them away,
// and a user who typed it to resume an interrupted abab lost the pairs
// measured. :rerun NAME (RunForced) ignores them, as -rerun does.
func TestRunAgainResumesCheckpoints(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "stop.txt"), []byte("yes"), 0o644)
	e := openTest(t, dir, `# %% runs
def _one(i):
    return lambda: tick("again-%d" % i)
done = [memo("run/%d" % i, _one(i)) for i in range(2)]
if file("stop.txt") == "yes":
    fail("interrupted after two runs")
done
`)
	e.Run(true)
	if st := e.CellRun("runs"); st.Status != StatusError {
		t.Fatalf("first run: %s", st.Status)
	}
	os.WriteFile(filepath.Join(dir, "stop.txt"), []byte("no"), 0o644)
	for _, step := range []struct {
		mode RunMode
		want int // executions of each run's function so far
		why  string
	}{{RunAgain, 1, "run again (:run runs; valid checkpoints reused)"}, {RunAgain, 1, ""}, {RunForced, 2, "forced (:rerun runs)"}} {
		if err := e.RunCell("runs", step.mode); err != nil {
			t.Fatal(err)
		}
		st := e.CellRun("runs")
		if st.Status != StatusRan || step.why != "" && st.Why != step.why {
			t.Errorf("mode %d: %s (%s), want ran (%s)", step.mode, st.Status, st.Why, step.why)
		}
		for i := range 2 {
			if n := calls[fmt.Sprintf("again-%d", i)]; n != step.want {
				t.Errorf("mode %d: run %d executed %d times in all, want %d", step.mode, i, n, step.want)
			}
		}
	}
}
