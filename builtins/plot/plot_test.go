package plot

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/golden"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// maxFigureBytes is the size budget of one figure.
const maxFigureBytes = 30 << 10

func testThread(t *testing.T) *starlark.Thread {
	return startest.Thread(t, startest.Options{})
}

// call invokes a member of the module as Starlark would.
func call(t *testing.T, name string, args starlark.Tuple, kwargs ...starlark.Tuple) (*Figure, error) {
	t.Helper()
	return callOn(testThread(t), name, args, kwargs)
}

func callOn(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (*Figure, error) {
	v, err := starlark.Call(th, members.Members[name], args, kwargs)
	if err != nil {
		return nil, err
	}
	return v.(*Figure), nil
}

func kw(name string, v starlark.Value) starlark.Tuple {
	return starlark.Tuple{starlark.String(name), v}
}

func list(vs ...starlark.Value) *starlark.List { return starlark.NewList(vs) }

// figureCase is one call of the module, its data built in advance.
type figureCase struct {
	builtin string
	args    starlark.Tuple
	kwargs  []starlark.Tuple
}

// goldenCases draws each kind of chart from seeded data.
func goldenCases() map[string]figureCase {
	a := newFakeRun(fakeOptions{seed: 1, label: "A: seq scan", n: 20000, medianUs: 1200, sigma: 0.5, windows: 30})
	b := newFakeRun(fakeOptions{seed: 2, label: "B: index", n: 20000, medianUs: 700, sigma: 0.7, windows: 30})
	var many []starlark.Value
	for i := range 9 {
		many = append(many, fakeComparison(fmt.Sprintf("metric_number_%d", i), "lower", 80+5*float64(i), "~"))
	}
	return map[string]figureCase{
		"bars": {"bars", starlark.Tuple{list(
			fakeComparison("req_per_s", "higher", 131.4, "IMPROVES"),
			fakeComparison("p99_ms", "lower", 72.5, "IMPROVES"),
			fakeComparison("cpu_per_req", "lower", 101.2, "~"))}, nil},
		"bars_many": {"bars", starlark.Tuple{list(many...)}, nil},
		"bars_log": {"bars", starlark.Tuple{list(
			fakeComparison("tps", "higher", 11565, "IMPROVES"),
			fakeComparison("p99_ms", "lower", 3, "IMPROVES"),
			fakeComparison("db_cpu_us_per_req", "lower", 1, "IMPROVES"),
			fakeComparison("buffers_per_req", "lower", 0.8, "IMPROVES"))}, nil},
		"pairs_conditions": {"pairs", starlark.Tuple{conditionsExperiment()}, nil},
		"pairs_log": {"pairs", starlark.Tuple{valueExperiment(map[string][]float64{
			"A": {3000, 3300, 2850, 3450}, "B": {30, 33, 28.5, 34.5}})}, nil},
		"bars_rows":        {"bars", starlark.Tuple{list(row("rps", 1000, 1250), row("tps", 400, 380))}, nil},
		"pairs_three_arms": {"pairs", starlark.Tuple{threeArms()}, []starlark.Tuple{kw("metric", starlark.String("mean"))}},
		"latency":          {"latency", starlark.Tuple{list(a, b)}, nil},
		"series":           {"series", starlark.Tuple{list(a, b)}, []starlark.Tuple{kw("metric", starlark.String("p99"))}},
		"pairs":            {"pairs", starlark.Tuple{fakeExperiment(4)}, []starlark.Tuple{kw("metric", starlark.String("p99"))}},
		"sweep": {"sweep", starlark.Tuple{sweepRows()}, []starlark.Tuple{
			kw("x", starlark.String("clients")), kw("y", starlark.String("rps")), kw("by", starlark.String("pool"))}},
		"hist": {"hist", starlark.Tuple{list(a, b)}, nil},
		"sweep_slo": {"sweep", starlark.Tuple{sweepRows()}, []starlark.Tuple{
			kw("x", starlark.String("clients")), kw("y", starlark.String("p99")), kw("by", starlark.String("pool")),
			kw("slo", starlark.MakeInt(12)), kw("log_y", starlark.True)}},
		"capacity":      {"capacity", starlark.Tuple{searchOf(1, 8)}, nil},
		"capacity_abab": {"capacity", starlark.Tuple{capacityExperiment()}, nil},
	}
}

func row(name string, before, after float64) starlark.Value {
	d := starlark.NewDict(3)
	_ = d.SetKey(starlark.String("name"), starlark.String(name))
	_ = d.SetKey(starlark.String("before"), starlark.Float(before))
	_ = d.SetKey(starlark.String("after"), starlark.Float(after))
	return d
}

func TestGolden(t *testing.T) {
	for name, c := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			fig, err := call(t, c.builtin, c.args, c.kwargs...)
			if err != nil {
				t.Fatal(err)
			}
			again, err := call(t, c.builtin, c.args, c.kwargs...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fig.SVG(), again.SVG()) {
				t.Fatal("two renderings of the same data differ")
			}
			checkSVG(t, fig.SVG())
			golden.Check(t, filepath.Join("testdata", "golden", name+".svg"), fig.SVG())
		})
	}
}

// checkSVG asserts what every figure must be: bounded in size, with a
// browser font fallback.
func checkSVG(t *testing.T, svg []byte) {
	t.Helper()
	if len(svg) > maxFigureBytes {
		t.Errorf("figure is %d bytes, budget %d", len(svg), maxFigureBytes)
	}
	if !bytes.Contains(svg, []byte("sans-serif")) || bytes.Contains(svg, []byte("font-family:Liberation Serif")) {
		t.Error("figure text lacks the sans-serif fallback")
	}
	if !bytes.Contains(svg, []byte("<title>")) {
		t.Error("SVG has no <title>")
	}
	if !bytes.HasSuffix(bytes.TrimSpace(svg), []byte("</svg>")) {
		t.Error("SVG is not closed")
	}
}

// TestSizeBounds draws the largest usual figures: eight runs at once.
func TestSizeBounds(t *testing.T) {
	var runs []starlark.Value
	for i := range 8 {
		runs = append(runs, newFakeRun(fakeOptions{seed: uint64(20 + i), label: fmt.Sprintf("run %d with a long label", i),
			n: 100000, medianUs: 500 + 100*float64(i), sigma: 0.9, windows: 600}))
	}
	for _, name := range []string{"latency", "series", "hist"} {
		fig, err := call(t, name, starlark.Tuple{list(runs...)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s of 8 runs: %d bytes", name, len(fig.SVG()))
		checkSVG(t, fig.SVG())
	}
}

func TestBarsTitleDirection(t *testing.T) {
	fig, err := call(t, "bars", starlark.Tuple{list(
		fakeComparison("rps", "higher", 120, "IMPROVES"), fakeComparison("tps", "higher", 95, "~"))})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fig.Title(), "higher is better") {
		t.Errorf("title %q lacks the direction", fig.Title())
	}
	for _, want := range []string{"IMPROVES", "before: A", "after: B", "rps", "tps"} {
		if !bytes.Contains(fig.SVG(), []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestLatencyEdgeCases(t *testing.T) {
	cases := map[string]fakeOptions{
		"one sample":   {seed: 3, n: 1, medianUs: 500, sigma: 0.1, windows: 1},
		"zero values":  {seed: 4, n: 5000, medianUs: 3, sigma: 1, windows: 2, zeroShare: 0.3},
		"all zero":     {seed: 5, n: 100, medianUs: 0, sigma: 0, windows: 1},
		"huge tail":    {seed: 6, n: 200000, medianUs: 300, sigma: 2, windows: 10},
		"single value": {seed: 7, n: 1000, medianUs: 250, sigma: 0, windows: 1},
	}
	for name, o := range cases {
		for _, logY := range []bool{false, true} {
			r := newFakeRun(o)
			fig, err := call(t, "latency", starlark.Tuple{r}, kw("log_y", starlark.Bool(logY)))
			if err != nil {
				t.Errorf("%s (log_y=%v): %v", name, logY, err)
				continue
			}
			checkSVG(t, fig.SVG())
			if bytes.Contains(fig.SVG(), []byte("NaN")) || bytes.Contains(fig.SVG(), []byte("Inf")) {
				t.Errorf("%s (log_y=%v): SVG holds NaN or Inf", name, logY)
			}
		}
	}
}

func TestLatencyCurveStopsBeforeP100(t *testing.T) {
	r := newFakeRun(fakeOptions{seed: 8, n: 500, medianUs: 800, sigma: 0.6, windows: 1})
	xys := percentileCurve(r.Hdr())
	last := xys[len(xys)-1]
	if last.X > 500 {
		t.Errorf("curve reaches 1/(1-p) = %v beyond what 500 samples resolve", last.X)
	}
	for i := 1; i < len(xys); i++ {
		if xys[i].Y < xys[i-1].Y {
			t.Fatalf("curve decreases at %v", xys[i].X)
		}
	}
	// Near x = 2 (the median) the curve must sit between p45 and p55.
	i := 0
	for xys[i].X < 2 {
		i++
	}
	lo, hi := float64(r.Hdr().ValueAtQuantile(45))/1000, float64(r.Hdr().ValueAtQuantile(55))/1000
	if y := xys[i].Y; y < lo || y > hi {
		t.Errorf("curve at x=%.3f is %v ms, want between p45 %v and p55 %v", xys[i].X, y, lo, hi)
	}
}

func TestSeriesDownsamples(t *testing.T) {
	r := newFakeRun(fakeOptions{seed: 9, n: 100000, medianUs: 500, sigma: 0.5, windows: 2000})
	fig, err := call(t, "series", starlark.Tuple{r}, kw("metric", starlark.String("p99")))
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, fig.SVG())
	if !strings.Contains(fig.Title(), "max of every") {
		t.Errorf("title %q does not say the series was downsampled", fig.Title())
	}
	xys, step := downsample(make(plotter.XYs, 2000), maxSeriesPoints, false)
	if len(xys) > maxSeriesPoints || step < 2 {
		t.Errorf("downsample kept %d points with step %d", len(xys), step)
	}
}

func TestFigureCodecRoundTrip(t *testing.T) {
	c := goldenCases()["bars"]
	fig, err := call(t, c.builtin, c.args, c.kwargs...)
	if err != nil {
		t.Fatal(err)
	}
	data, err := codec.Encode(list(fig))
	if err != nil {
		t.Fatal(err)
	}
	v, err := codec.Decode(data, Module().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(*starlark.List).Index(0).(*Figure)
	if got.Title() != fig.Title() || !bytes.Equal(got.SVG(), fig.SVG()) {
		t.Error("figure changed through the codec")
	}
	if h := got.HTML(); !strings.HasPrefix(h, "<figure") || strings.Contains(h, "<?xml") {
		t.Errorf("HTML is not an inline SVG: %.60q", h)
	}
}

// TestStarlark runs testdata/*.star with the module, fakes and assert.
func TestStarlark(t *testing.T) {
	startest.RunFiles(t, "testdata/*.star", func(t *testing.T) startest.Options {
		return startest.Options{Modules: []runtime.Module{Module()}, Globals: starlark.StringDict{
			"fake_run":   starlark.NewBuiltin("fake_run", fakeRunBuiltin),
			"fake_cmp":   starlark.NewBuiltin("fake_cmp", fakeCmpBuiltin),
			"fake_exp":   fakeExperiment(3),
			"sweep_rows": sweepRows(),
		}}
	})
}

func fakeRunBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	o := fakeOptions{n: 2000, medianUs: 800, sigma: 0.5, windows: 5}
	var seed int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "seed", &seed, "label?", &o.label); err != nil {
		return nil, err
	}
	o.seed = uint64(seed)
	return newFakeRun(o), nil
}

func fakeCmpBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var metric, better, verdict string
	var index float64
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "metric", &metric, "better", &better, "index", &index, "verdict", &verdict); err != nil {
		return nil, err
	}
	return fakeComparison(metric, better, index, verdict), nil
}

// BenchmarkFigures times each kind of chart from data to SVG bytes.
func BenchmarkFigures(b *testing.B) {
	th := &starlark.Thread{Name: "bench"}
	for name, c := range goldenCases() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := callOn(th, c.builtin, c.args, c.kwargs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTicksFarFromZeroEnd (issue 25's audit): an axis whose range is below
// its values' precision (1e17 to 1e17+16) gets ticks and ends; before,
// v += step did not move v and the render never returned.
func TestTicksFarFromZeroEnd(t *testing.T) {
	done := make(chan []gplot.Tick, 1)
	go func() { done <- niceTicks{}.Ticks(1e17, 1e17+16) }()
	select {
	case ticks := <-done:
		if len(ticks) == 0 {
			t.Error("no ticks")
		}
		for i := 1; i < len(ticks); i++ {
			if ticks[i].Value <= ticks[i-1].Value {
				t.Errorf("ticks not increasing: %v", ticks)
				break
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ticks(1e17, 1e17+16) still running after 5s")
	}
	if n := len(niceTicks{}.Ticks(0, 10)); n < 3 || n > 12 {
		t.Errorf("Ticks(0, 10): %d ticks", n)
	}
}
