package runtime

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// box is a host value a test module makes and stores.
type box string

func (b box) String() string                { return "box(" + string(b) + ")" }
func (b box) Type() string                  { return "runtime_test.box" }
func (b box) Freeze()                       {}
func (b box) Truth() starlark.Bool          { return true }
func (b box) Hash() (uint32, error)         { return 0, errors.New("unhashable") }
func (b box) MarshalValue() ([]byte, error) { return []byte(b), nil }

// boxModule gives box(s), its decoder, an input kind whose hash is *hash,
// and a record pass that counts the boxes the record keeps.
func boxModule(hash *string, kept *int) Module {
	return Module{
		Name: "box",
		Globals: starlark.StringDict{"box": starlark.NewBuiltin("box", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var s string
			if err := starlark.UnpackArgs(b.Name(), args, kw, "s", &s); err != nil {
				return nil, err
			}
			AddInput(th, Input{Kind: "box-input", Name: s, Hash: *hash})
			return box(s), nil
		})},
		Decoders: codec.Types{"runtime_test.box": func(data []byte, _ codec.Types) (starlark.Value, error) { return box(data), nil }},
		Inputs:   map[string]InputChecker{"box-input": func(string) (string, error) { return *hash, nil }},
		Named:    []string{"runtime_test.box"},
		Pass:     func(r *record.Record) { *kept = len(r.Named) },
	}
}

// TestModulesAreTheEngines: what a module gives (globals, decoders, input
// checkers, named types and passes) reaches the engine it was given to
// and no other, in one process.
func TestModulesAreTheEngines(t *testing.T) {
	dir := t.TempDir()
	hash, kept := "1", 0
	src := "# %% a\nb = box(\"x\")\n\n# %% c\nd = str(b)\nd\n"
	with := Options{Modules: []Module{boxModule(&hash, &kept)}}

	r := runNotebook(t, dir, src, with)
	if r.outputs["c"] != `"box(x)"` {
		t.Fatalf("c shows %q (%s)", r.outputs["c"], r.e.CellRun("c").Err)
	}
	r.e.Record()
	if kept != 1 {
		t.Errorf("the module's pass saw %d named boxes, want 1", kept)
	}

	// The value comes back through the module's decoder: c reruns (its
	// source changed) on a's cached box.
	r = runNotebook(t, dir, src+"d\n", with)
	if r.status("a") != StatusHit || r.outputs["c"] != `"box(x)"` {
		t.Errorf("with the module: a %s, c %q (%v)", r.status("a"), r.outputs["c"], r.e.CellRun("c").Err)
	}
	// The module's input checker decides a's staleness.
	hash = "2"
	if r = runNotebook(t, dir, src, with); r.status("a") != StatusRan || !strings.Contains(r.e.CellRun("a").Why, "box-input") {
		t.Errorf("after the input changed: a %s (%s), want ran", r.status("a"), r.e.CellRun("a").Why)
	}

	// Another engine of this process, without the module, knows no box.
	nb, err := ParseFile(filepath.Join(dir, "nb.star"))
	if err != nil {
		t.Fatal(err)
	}
	if e, err := Open(t.Context(), nb, Options{CacheDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "undefined: box") {
		if e != nil {
			e.Close()
		}
		t.Errorf("without the module: %v", err)
	}
}

// TestModuleClash: two modules giving one name is an error naming both,
// not the silent win of the later one.
func TestModuleClash(t *testing.T) {
	a := Module{Name: "one", Globals: starlark.StringDict{"x": starlark.None}}
	b := Module{Name: "two", Globals: starlark.StringDict{"x": starlark.True}}
	if _, err := NewModuleSet(nil, a, b); err == nil || !strings.Contains(err.Error(), "one and two") {
		t.Errorf("two modules giving x: %v", err)
	}
	if _, err := NewModuleSet(nil, Module{Name: "mine", Globals: starlark.StringDict{"param": starlark.None}}); err == nil || !strings.Contains(err.Error(), "runtime and mine") {
		t.Errorf("a module redefining Core's param: %v", err)
	}
	c := Module{Name: "three", Decoders: codec.Types{"printed": nil}}
	if _, err := NewModuleSet(nil, c); err == nil || !strings.Contains(err.Error(), `value type "printed"`) {
		t.Errorf("a module decoding Core's printed: %v", err)
	}
}

// TestStdlibIsTheOptions: "@std/" loads from Options.Stdlib, and without
// one it is an error naming the module.
func TestStdlibIsTheOptions(t *testing.T) {
	std := fstest.MapFS{"seven.star": {Data: []byte("seven = 7\n")}}
	src := "# %% a\nload(\"@std/seven.star\", \"seven\")\nv = seven\nv\n"
	if r := runNotebook(t, t.TempDir(), src, Options{Stdlib: std}); r.outputs["a"] != "7" {
		t.Errorf("with a stdlib: a shows %q (%v)", r.outputs["a"], r.e.CellRun("a").Err)
	}
	r := runNotebook(t, t.TempDir(), src, Options{})
	if st := r.e.CellRun("a"); st.Err == nil || !strings.Contains(st.Err.Error(), "@std/seven.star") {
		t.Errorf("without a stdlib: a %s %v", st.Status, st.Err)
	}
}
