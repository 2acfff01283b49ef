package gocode

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/starlarktest"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime"
)

// session returns a session whose notebook directory is dir and a thread of
// one cell in it.
func session(t *testing.T, ctx context.Context, dir string) (*runtime.Session, *starlark.Thread, *runtime.Cell) {
	t.Helper()
	s := &runtime.Session{Ctx: ctx, Stderr: io.Discard, NotebookDir: dir, CacheDir: t.TempDir()}
	t.Cleanup(s.Close)
	c := &runtime.Cell{Name: "t"}
	return s, s.NewThread(c), c
}

// TestStarlark runs every testdata/*.star file; each asserts with the
// starlarktest assert module.
func TestStarlark(t *testing.T) {
	files, err := filepath.Glob("testdata/*.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	assert, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, th, _ := session(t, context.Background(), "testdata")
			starlarktest.SetReporter(th, t)
			env := runtime.Predeclared()
			for k, v := range assert {
				env[k] = v
			}
			env["struct"] = starlark.NewBuiltin("struct", starlarkstruct.Make)
			opts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}
			if _, err := starlark.ExecFileOptions(opts, th, file, src, env); err != nil {
				if ee, ok := err.(*starlark.EvalError); ok {
					t.Fatal(ee.Backtrace())
				}
				t.Fatal(err)
			}
		})
	}
}

func TestDisplay(t *testing.T) {
	p, err := loadFile(t, context.Background(), "testdata", "conv.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<code>conv.go</code>", "<li><code>parse_json_key</code> <small>func ParseJSONKey(rawInput string) string</small></li>"} {
		if !strings.Contains(p.HTML(), want) {
			t.Errorf("HTML lacks %q:\n%s", want, p.HTML())
		}
	}
	if want := "- `mid`: `func Mid(a, b Point) Point`\n"; !strings.Contains(p.Markdown(), want) {
		t.Errorf("Markdown lacks %q:\n%s", want, p.Markdown())
	}
	if j := p.JSON().(map[string]any); len(j["sha256"].(string)) != 64 || j["functions"].(map[string]string)["div_mod"] != "func DivMod(a, b int) (int, int)" {
		t.Errorf("JSON %v", j)
	}
}
