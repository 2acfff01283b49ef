package metric

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// testModules are what the tests' code sees: metric, and display's table.
func testModules() []runtime.Module { return []runtime.Module{Module(), display.Module()} }

func TestStarlark(t *testing.T) {
	startest.RunFiles(t, "testdata/*.star", func(*testing.T) startest.Options {
		return startest.Options{Modules: testModules(), Globals: starlark.StringDict{
			"markdown_of": renderAs("markdown_of", func(v starlark.Value) (string, bool) {
				m, ok := v.(record.Markdowner)
				if !ok {
					return "", false
				}
				return m.Markdown(), true
			}),
			"html_of": renderAs("html_of", func(v starlark.Value) (string, bool) {
				h, ok := v.(record.HTMLer)
				if !ok {
					return "", false
				}
				return h.HTML(), true
			}),
		}}
	})
}

// renderAs is a test builtin that returns what the record shows of a value:
// its Markdown or its HTML.
func renderAs(name string, render func(starlark.Value) (string, bool)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
			return nil, err
		}
		s, ok := render(v)
		if !ok {
			return nil, fmt.Errorf("%s: a %s has no such rendering", b.Name(), v.Type())
		}
		return starlark.String(s), nil
	})
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
	bars := newBars([]string{"rps"}, []barIndex{shownBar(c.Shown())})
	for _, x := range []starlark.Value{c, v, bars} {
		data, err := codec.Encode(x)
		if err != nil {
			t.Fatalf("%s: %v", x.Type(), err)
		}
		back, err := codec.Decode(data, Module().Decoders)
		if err != nil {
			t.Fatalf("%s: %v", x.Type(), err)
		}
		if back.Type() != x.Type() || back.String() != x.String() {
			t.Errorf("round trip changed %s: %s -> %s", x.Type(), x, back)
		}
	}
	// The one-run comparison has no A-A spread and no interval: NaN must
	// survive storage.
	back, err := codec.Decode(must(codec.Encode(c)), Module().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	if b := back.(*Comparison); !math.IsNaN(b.AASpreadPct) || !math.IsNaN(b.CI.Low) || b.CI.None == "" {
		t.Errorf("one run's spread and interval did not survive storage: %+v %+v", b.AASpreadPct, b.CI)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestRenderings(t *testing.T) {
	c, err := newComparison(compareInput{
		metric: "db<cpu>", better: "lower", aLabel: "main", bLabel: "v50",
		a: []float64{100, 104, 98, 101, 99, 102}, b: []float64{61, 60, 63, 62, 61, 62},
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
	if j := c.JSON().(map[string]any); j["verdict"] != "IMPROVES" || j["index"] != 61.0 || j["reason"] != "" || j["alpha"] != 0.05 ||
		j["test"] != "Wilcoxon signed-rank" || j["ci"].([]any)[0].(float64) < 50 {
		t.Errorf("json: %v", j)
	}
}
