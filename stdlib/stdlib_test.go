package stdlib_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/starlarktest"
	"go.starlark.net/syntax"

	_ "github.com/benchbook/benchbook/builtins/display"
	_ "github.com/benchbook/benchbook/builtins/host"
	_ "github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/stdlib"
)

// The stdlib's tests are Starlark files in testdata, run with every
// builtin, starlarktest's assert, and a memo kept in a Go map so that a
// file can interrupt an experiment and run it again to see it resume. (The
// engine's own memo store is wired by runtime.Engine; TestResumeInEngine
// checks the real thing.)

var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// mapMemo is memo(key, fn) over a map: fn() once per key, frozen.
func mapMemo() *starlark.Builtin {
	var mu sync.Mutex
	store := map[string]starlark.Value{}
	return starlark.NewBuiltin("memo", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var key string
		var fn starlark.Callable
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "key", &key, "fn", &fn); err != nil {
			return nil, err
		}
		mu.Lock()
		v, ok := store[key]
		mu.Unlock()
		if ok {
			return v, nil
		}
		v, err := starlark.Call(th, fn, nil, nil)
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

func env(t *testing.T) starlark.StringDict {
	assertMod, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	e := runtime.Predeclared()
	e["assert"] = assertMod["assert"]
	e["struct"] = starlark.NewBuiltin("struct", starlarkstruct.Make)
	e["memo"] = mapMemo()
	return e
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
		g, err := starlark.ExecFileOptions(fileOptions, th, name, src, predeclared)
		if err != nil {
			return nil, err
		}
		g.Freeze()
		cache[name] = g
		return g, nil
	}
}

func TestStarlark(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.star")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: t.TempDir(), CacheDir: t.TempDir()}
			defer s.Close()
			th := s.NewThread(&runtime.Cell{Name: "t"})
			e := env(t)
			th.Load = loader(e)
			starlarktest.SetReporter(th, t)
			if _, err := starlark.ExecFileOptions(fileOptions, th, f, src, e); err != nil {
				if ee, ok := err.(*starlark.EvalError); ok {
					t.Fatal(ee.Backtrace())
				}
				t.Fatal(err)
			}
		})
	}
}

// Every stdlib module parses and loads with nothing but the registered
// builtins (plus struct, which the engine must provide).
func TestModulesLoad(t *testing.T) {
	entries, err := stdlib.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	e := runtime.Predeclared()
	if _, ok := e["struct"]; !ok {
		e["struct"] = starlark.NewBuiltin("struct", starlarkstruct.Make)
	}
	for _, ent := range entries {
		src, _ := stdlib.FS.ReadFile(ent.Name())
		th := &starlark.Thread{Name: ent.Name()}
		if _, err := starlark.ExecFileOptions(fileOptions, th, ent.Name(), src, e); err != nil {
			t.Errorf("%s: %v", ent.Name(), err)
		}
	}
}
