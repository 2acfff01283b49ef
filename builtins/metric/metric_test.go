package metric

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
	"github.com/benchbook/benchbook/runtime/codec"
)

// runStar executes a Starlark test file with every builtin, assert from
// starlarktest and struct; it returns the cell's outputs count via emit.
func runStar(t *testing.T, path string) *runtime.Session {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: t.TempDir(), CacheDir: t.TempDir()}
	t.Cleanup(s.Close)
	th := s.NewThread(&runtime.Cell{Name: "t"})
	starlarktest.SetReporter(th, t)
	assertMod, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	env := runtime.Predeclared()
	env["assert"] = assertMod["assert"]
	env["struct"] = starlark.NewBuiltin("struct", starlarkstruct.Make)
	opts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}
	if _, err := starlark.ExecFileOptions(opts, th, path, src, env); err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			t.Fatal(ee.Backtrace())
		}
		t.Fatal(err)
	}
	return s
}

func TestStarlark(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.star")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runStar(t, f) })
	}
}

func TestCodecRoundTrip(t *testing.T) {
	c, err := newComparison(compareInput{
		metric: "rps", better: "higher", aLabel: "A", bLabel: "B",
		a: []float64{100}, b: []float64{120},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := &Verdict{Status: "kept", Summary: "faster", Headline: c}
	bars := newBars([]string{"rps"}, []int{c.Index})
	for _, x := range []starlark.Value{c, v, bars} {
		data, err := codec.Encode(x)
		if err != nil {
			t.Fatalf("%s: %v", x.Type(), err)
		}
		back, err := codec.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", x.Type(), err)
		}
		if back.Type() != x.Type() || back.String() != x.String() {
			t.Errorf("round trip changed %s: %s -> %s", x.Type(), x, back)
		}
	}
	// The one-run comparison has no A-A spread: NaN must survive storage.
	if !strings.Contains(c.String(), "unknown") {
		t.Errorf("spread of one run should print as unknown: %s", c)
	}
}

func TestRenderings(t *testing.T) {
	c, err := newComparison(compareInput{
		metric: "db<cpu>", better: "lower", aLabel: "main", bLabel: "v50",
		a: []float64{100, 104, 98, 101}, b: []float64{61, 60, 63, 62},
	})
	if err != nil {
		t.Fatal(err)
	}
	md := c.Markdown()
	if !strings.Contains(md, "before ████████████████ 100 | after ██████████ 61") {
		t.Errorf("markdown lacks the seeds' bar line:\n%s", md)
	}
	h := c.HTML()
	if strings.Contains(h, "<cpu>") || !strings.Contains(h, "IMPROVES") {
		t.Errorf("html not escaped or lacks the verdict:\n%s", h)
	}
	if j := c.JSON().(map[string]any); j["verdict"] != "IMPROVES" || j["index"] != 61 || j["reason"] != "" || j["alpha"] != 0.05 {
		t.Errorf("json: %v", j)
	}
}
