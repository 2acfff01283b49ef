package plot

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// The oracle here is the SVG itself, read as a browser would draw it:
// shapes by fill colour and coordinates, not the plot's own state.

// pxPerPt: figures are sized in points; a browser at 96 dpi draws 4/3 px
// per point, and the record shows them at their natural size at 1280 px.
const pxPerPt = 4.0 / 3

var (
	svgPath   = regexp.MustCompile(`<path d="([^"]+)" style="fill:(#[0-9A-Fa-f]{6})"`)
	svgNumber = regexp.MustCompile(`-?\d+(?:\.\d+)?(?:e-?\d+)?`)
)

// shape is a filled path's bounding box in SVG points.
type shape struct {
	fill                   string
	minX, minY, maxX, maxY float64
}

func (s shape) centerY() float64 { return (s.minY + s.maxY) / 2 }

// svgShapes returns the filled paths inside the data area: the first
// white rectangle is the data area's background, and the legend strip
// lies to its right.
func svgShapes(t *testing.T, svg []byte) []shape {
	t.Helper()
	var all []shape
	areaMaxX := math.Inf(1)
	for _, m := range svgPath.FindAllStringSubmatch(string(svg), -1) {
		s := shape{fill: strings.ToUpper(m[2]), minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
		d := strings.NewReplacer("A", " A ", "M", " ", "L", " ", "Z", " ").Replace(m[1])
		if strings.Contains(d, "A") { // a circle glyph: M x,y A r,r 0 1 1 x2,y ... : its points bound it well enough
			d = regexp.MustCompile(`A\S+ 0 1 1`).ReplaceAllString(strings.ReplaceAll(d, " A ", "A"), " ")
		}
		nums := svgNumber.FindAllString(d, -1)
		for i := 0; i+1 < len(nums); i += 2 {
			x, _ := strconv.ParseFloat(nums[i], 64)
			y, _ := strconv.ParseFloat(nums[i+1], 64)
			s.minX, s.maxX = math.Min(s.minX, x), math.Max(s.maxX, x)
			s.minY, s.maxY = math.Min(s.minY, y), math.Max(s.maxY, y)
		}
		if s.fill == "#FFFFFF" && math.IsInf(areaMaxX, 1) {
			areaMaxX = s.maxX
		}
		all = append(all, s)
	}
	var out []shape
	for _, s := range all {
		if s.fill != "#FFFFFF" && s.maxX <= areaMaxX {
			out = append(out, s)
		}
	}
	return out
}

// checkBarsReadable asserts the acceptance on a bar chart: no bar
// shorter than 2 px, and as many bars as the data has.
func checkBarsReadable(t *testing.T, svg []byte, wantBars int) {
	t.Helper()
	bars := 0
	for _, s := range svgShapes(t, svg) {
		if s.fill != "#999999" && s.fill != "#0072B2" {
			continue
		}
		bars++
		if h := (s.maxY - s.minY) * pxPerPt; h < 2 {
			t.Errorf("a %s bar is %.2f px high (under 2 px)", s.fill, h)
		}
	}
	if bars != wantBars {
		t.Errorf("found %d bars in the SVG, want %d", bars, wantBars)
	}
}

// TestBarsMixedMagnitudes draws the figures: tps at index 11,565
// beside p99 at 3, DB CPU at 1, buffers at 17 and an index of 0.8.
func TestBarsMixedMagnitudes(t *testing.T) {
	cmps := list(
		fakeComparison("tps", "higher", 11565, "IMPROVES"),
		fakeComparison("p99_ms", "lower", 3, "IMPROVES"),
		fakeComparison("db_cpu_us_per_req", "lower", 1, "IMPROVES"),
		fakeComparison("buffers_per_req", "lower", 17, "IMPROVES"),
		fakeComparison("wal_bytes_per_req", "lower", 0.8, "IMPROVES"))
	fig, err := call(t, "bars", starlark.Tuple{cmps})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, fig.SVG())
	checkBarsReadable(t, fig.SVG(), 10)
	// Labels print an index as a comparison's sentence would (stats.ShowIndex):
	// two significant digits below 10.
	for _, label := range []string{">0.80 IMPROVES<", ">11565 IMPROVES<", ">3.0 IMPROVES<"} {
		if !strings.Contains(string(fig.SVG()), label) {
			t.Errorf("SVG lacks the label %q", label)
		}
	}
}

// TestBarsLabelsKeepPrecision: a comparison's index attribute is a whole
// number; the bar label must come from the means (0.8, not 1).
func TestBarsLabelsKeepPrecision(t *testing.T) {
	cmp := starlarkstruct.FromStringDict(starlark.String("comparison"), starlark.StringDict{
		"metric": starlark.String("wal"), "better": starlark.String("lower"),
		"index": starlark.MakeInt(1), "verdict": starlark.String("IMPROVES"),
		"mean_a": starlark.Float(1000), "mean_b": starlark.Float(8),
	})
	fig, err := call(t, "bars", starlark.Tuple{list(cmp, fakeComparison("rps", "higher", 95, "~"))})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(fig.SVG()), ">0.80 IMPROVES<") {
		t.Error("the index of 0.8 is not labelled 0.80")
	}
	checkBarsReadable(t, fig.SVG(), 4)
}

// TestBarsGoldenReadable: every golden bar chart passes the same check.
func TestBarsGoldenReadable(t *testing.T) {
	for name, c := range goldenCases() {
		if c.builtin != "bars" {
			continue
		}
		fig, err := call(t, c.builtin, c.args, c.kwargs...)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			n := len(starval.Items(c.args[0]))
			checkBarsReadable(t, fig.SVG(), 2*n)
		})
	}
}

// TestPairsArmsOfDifferentSize: an arm of ~30 tps beside one of ~3,000;
// each arm's run-to-run spread (±15%) must show, not sit on the zero line.
func TestPairsArmsOfDifferentSize(t *testing.T) {
	exp := valueExperiment(map[string][]float64{
		"A": {3000, 3300, 2850, 3450},
		"B": {30, 33, 28.5, 34.5},
	})
	fig, err := call(t, "pairs", starlark.Tuple{exp}, kw("metric", starlark.String("rps")))
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, fig.SVG())
	ys := map[string][]float64{}
	for _, s := range svgShapes(t, fig.SVG()) {
		ys[s.fill] = append(ys[s.fill], s.centerY())
	}
	for _, fill := range []string{"#0072B2", "#E69F00"} {
		pts := ys[fill]
		if len(pts) != 4 {
			t.Fatalf("arm %s: %d points in the SVG, want 4", fill, len(pts))
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, y := range pts {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
		if spread := (hi - lo) * pxPerPt; spread < 8 {
			t.Errorf("arm %s: its four runs span %.1f px; a ±10%% spread should be visible", fill, spread)
		}
	}
}

// valueExperiment is an experiment whose runs are structs with an rps.
func valueExperiment(arms map[string][]float64) starlark.Value {
	runs := starlark.NewDict(len(arms))
	var names []starlark.Value
	for _, name := range []string{"A", "B"} {
		var rs []starlark.Value
		for i, v := range arms[name] {
			rs = append(rs, starlarkstruct.FromStringDict(starlark.String("run"), starlark.StringDict{
				"rps": starlark.Float(v), "label": starlark.String(fmt.Sprintf("%s%d", name, i+1)),
			}))
		}
		names = append(names, starlark.String(name))
		_ = runs.SetKey(starlark.String(name), starlark.NewList(rs))
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"arms": starlark.NewList(names), "runs": runs,
	})
}

// TestPairsConditionsStrip: under each run's dot, the box's conditions as
// abab records them (other CPU, load, busy) and the generator's own
// warning, aligned with that run's dot.
func TestPairsConditionsStrip(t *testing.T) {
	fig, err := call(t, "pairs", starlark.Tuple{conditionsExperiment()})
	if err != nil {
		t.Fatal(err)
	}
	svg := string(fig.SVG())
	checkSVG(t, fig.SVG())
	for _, want := range []string{">other CPU (cores)<", ">load 1m<", ">0.80<", ">1.2→1.5<", ">busy gen<", ">0.05<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("conditions strip lacks %q", want)
		}
	}
	// The flag sits under pair 2's B dot (a triangle), not under A's.
	flagX := textX(t, svg, "busy gen")
	var bx []float64
	for _, s := range svgShapes(t, fig.SVG()) {
		if s.fill == "#E69F00" {
			bx = append(bx, (s.minX+s.maxX)/2)
		}
	}
	// SVG text x is its left edge: "busy gen" at 7 pt is about 28 pt wide,
	// centred under the dot; A's dot of that pair is ~60 pt to the left.
	if len(bx) != 2 || flagX > bx[1] || flagX < bx[1]-25 {
		t.Errorf("flag at x=%.1f, B's dots at %v: not under pair 2's B run", flagX, bx)
	}
}

// textX is the x of the SVG text element holding exactly s.
func textX(t *testing.T, svg, s string) float64 {
	t.Helper()
	m := regexp.MustCompile(`<text x="([-0-9.]+)"[^>]*>\s*` + regexp.QuoteMeta(s) + `</text>`).FindStringSubmatch(svg)
	if m == nil {
		// multi-line text elements: gonum splits attributes over lines
		m = regexp.MustCompile(`(?s)<text x="([-0-9.]+)"[^<]*>` + regexp.QuoteMeta(s) + `</text>`).FindStringSubmatch(svg)
	}
	if m == nil {
		t.Fatalf("no text %q", s)
	}
	x, _ := strconv.ParseFloat(m[1], 64)
	return x
}

// conditionsExperiment is two pairs AB BA with an A-A control, whose
// second B run was on a busy box with a saturated generator.
func conditionsExperiment() starlark.Value {
	exp := valueExperiment(map[string][]float64{"A": {100, 104}, "B": {120, 125}})
	runs := starval.Attr(exp, "runs").(*starlark.Dict)
	b, _, _ := runs.Get(starlark.String("B"))
	slow := starlarkstruct.FromStringDict(starlark.String("run"), starlark.StringDict{
		"rps": starlark.Float(125), "warnings": list(starlark.String("the generator used 97% of its 2 CPUs: it may have been the bottleneck")),
	})
	b.(*starlark.List).SetIndex(1, slow)
	gate := func(before, after, foreign float64, busy bool) starlark.Value {
		return starlarkstruct.FromStringDict(starlark.String("struct"), starlark.StringDict{
			"load1_before": starlark.Float(before), "load1_after": starlark.Float(after),
			"foreign_cpu": starlark.Float(foreign), "busy": starlark.Bool(busy)})
	}
	pair := func(p int, arm string) starlark.Value {
		return starlark.Tuple{starlark.MakeInt(p), starlark.String(arm)}
	}
	d := starlark.StringDict{}
	for _, k := range []string{"arms", "runs"} {
		d[k] = starval.Attr(exp, k)
	}
	// AB BA, with an A-A control run after the first pair (not drawn).
	d["order"] = list(pair(0, "A"), pair(0, "B"), pair(0, "control"), pair(1, "B"), pair(1, "A"))
	d["gates"] = list(gate(0.5, 0.7, 0.02, false), gate(0.7, 0.9, 0.03, false), gate(0.9, 0.9, 0.01, false),
		gate(1.2, 1.5, 0.80, true), gate(1.5, 1.1, 0.05, false))
	return starlarkstruct.FromStringDict(starlarkstruct.Default, d)
}

// TestSeriesRunsOfDifferentSize: two runs at ~30 and ~3,000 req/s; the
// small run's window-to-window swings (±10%) must show, not lie flat on
// the floor of an axis that starts at 0.
func TestSeriesRunsOfDifferentSize(t *testing.T) {
	run := func(label string, base float64) starlark.Value {
		var ws []starlark.Value
		for i := range 8 {
			ws = append(ws, starlarkstruct.FromStringDict(starlark.String("window"), starlark.StringDict{
				"start": starlark.Float(float64(i)), "rps": starlark.Float(base * (1 + 0.1*float64(i%3-1))),
			}))
		}
		return starlarkstruct.FromStringDict(starlark.String("run"), starlark.StringDict{
			"label": starlark.String(label), "windows": list(ws...)})
	}
	fig, err := call(t, "series", starlark.Tuple{list(run("big", 3000), run("small", 30))})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, fig.SVG())
	// The small run's line: its y range as drawn.
	m := regexp.MustCompile(`<path d="(M[^"]+)" style="fill:none;stroke:#E69F00;stroke-width:1.2`).FindAllStringSubmatch(string(fig.SVG()), -1)
	if len(m) == 0 {
		t.Fatalf("no line of the second run in the SVG")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, path := range m {
		nums := svgNumber.FindAllString(strings.NewReplacer("M", " ", "L", " ").Replace(path[1]), -1)
		if len(nums) <= 4 {
			continue // the legend's swatch, a two-point line
		}
		for i := 1; i < len(nums); i += 2 {
			y, _ := strconv.ParseFloat(nums[i], 64)
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	if span := (hi - lo) * pxPerPt; span < 8 {
		t.Errorf("the 30 req/s run's ±10%% swings span %.1f px", span)
	}
}
