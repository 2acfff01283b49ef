package gocode

import (
	"context"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// thread returns a thread of one cell in a session whose notebook
// directory is dir, and the cell.
func thread(t *testing.T, ctx context.Context, dir string) (*starlark.Thread, *runtime.Cell) {
	t.Helper()
	c := &runtime.Cell{Name: "t"}
	return startest.Thread(t, startest.Options{Ctx: ctx, NotebookDir: dir, Cell: c, Modules: []runtime.Module{Module()}}), c
}

// TestStarlark runs every testdata/*.star file, with notebook dir testdata
// (they load the Go files beside them).
func TestStarlark(t *testing.T) {
	startest.RunFiles(t, "testdata/*.star", func(*testing.T) startest.Options {
		return startest.Options{NotebookDir: "testdata", Modules: []runtime.Module{Module()}}
	})
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
