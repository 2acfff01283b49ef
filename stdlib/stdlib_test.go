package stdlib_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
	"github.com/benchbook/benchbook/stdlib"
)

// The stdlib's tests are Starlark files in testdata, run with the modules
// the stdlib drives, starlarktest's assert, and a memo kept in a Go map so that a
// file can interrupt an experiment and run it again to see it resume. (The
// engine's own memo store is wired by runtime.Engine; TestResumeInEngine
// checks the real thing.)

// modules are what the stdlib's code drives: tables, the box, comparisons
// and runs.
func modules() []runtime.Module {
	return []runtime.Module{display.Module(), host.Module(), metric.Module(), workload.Module(workload.Options{})}
}

// mapMemo is memo(key, fn) over a map: fn() once per key, frozen; a memo
// inside another's fn is keyed under the outer key, as the engine's is.
func mapMemo() *starlark.Builtin {
	var mu sync.Mutex
	store := map[string]starlark.Value{}
	var path []string
	return starlark.NewBuiltin("memo", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var key string
		var fn starlark.Callable
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "key", &key, "fn", &fn); err != nil {
			return nil, err
		}
		if len(path) > 0 {
			key = path[len(path)-1] + "/" + key
		}
		mu.Lock()
		v, ok := store[key]
		mu.Unlock()
		if ok {
			return v, nil
		}
		path = append(path, key)
		v, err := starlark.Call(th, fn, nil, nil)
		path = path[:len(path)-1]
		if err != nil {
			return nil, err
		}
		v.Freeze()
		mu.Lock()
		store[key] = v
		mu.Unlock()
		return v, nil
	})
}

// options give a test file a fresh memo over a map, in its own code and in
// the stdlib modules it loads, so a file can interrupt an experiment and
// see it resume.
func options(t *testing.T) startest.Options {
	o := startest.Options{Modules: modules(), Globals: starlark.StringDict{"memo": mapMemo()}}
	o.Load = loader(startest.Env(t, o))
	return o
}

// loader resolves @std/NAME from the embedded stdlib with the test's env.
func loader(predeclared starlark.StringDict) func(*starlark.Thread, string) (starlark.StringDict, error) {
	cache := map[string]starlark.StringDict{}
	return func(th *starlark.Thread, name string) (starlark.StringDict, error) {
		if g, ok := cache[name]; ok {
			return g, nil
		}
		rest, ok := strings.CutPrefix(name, "@std/")
		if !ok {
			return nil, fmt.Errorf("test loader: only @std/ modules, got %q", name)
		}
		src, err := stdlib.FS.ReadFile(rest)
		if err != nil {
			return nil, err
		}
		g, err := starlark.ExecFileOptions(runtime.FileOptions(), th, name, src, predeclared)
		if err != nil {
			return nil, err
		}
		g.Freeze()
		cache[name] = g
		return g, nil
	}
}

func TestStarlark(t *testing.T) {
	startest.RunFiles(t, "testdata/*.star", options)
}

// Every stdlib module parses and loads with nothing but the engine's Core
// builtins and the modules it drives.
func TestModulesLoad(t *testing.T) {
	entries, err := stdlib.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	e := runtime.MustModuleSet(stdlib.FS, modules()...).Globals()
	for _, ent := range entries {
		src, _ := stdlib.FS.ReadFile(ent.Name())
		th := &starlark.Thread{Name: ent.Name()}
		if _, err := starlark.ExecFileOptions(runtime.FileOptions(), th, ent.Name(), src, e); err != nil {
			t.Errorf("%s: %v", ent.Name(), err)
		}
	}
}

// A sweep whose open-loop runs went out on different ticks says so: their
// latencies include different waits (the default tick changes at 2,500
// req/s per event loop). One tick says nothing.
func TestSweepSaysTicksDiffer(t *testing.T) {
	for _, c := range []struct {
		ticks string
		want  bool
	}{{"{1000: 0.0, 20000: 0.2}", true}, {"{1000: 0.0, 20000: 0.0}", false}} {
		var printed strings.Builder
		o := options(t)
		o.Print = func(_ *starlark.Thread, msg string) { printed.WriteString(msg + "\n") }
		th := startest.Thread(t, o)
		src := `load("@std/sweep.star", "sweep")
ticks = ` + c.ticks + `
t = sweep(grid = {"rate": [1000, 20000]}, run = lambda rate: struct(rps = float(rate), tick_ms = ticks[rate]), columns = {"rps": "rps"})
`
		if _, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "t.star", src, startest.Env(t, o)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(printed.String(), "different ticks (0.0, 0.2 ms"); got != c.want {
			t.Errorf("ticks %s: printed %q, want the tick note %v", c.ticks, printed.String(), c.want)
		}
	}
}
