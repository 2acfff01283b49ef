package plot

import (
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/stats"
)

// barGroup is one metric's pair of bars, as index values (before = 100).
type barGroup struct {
	name          string
	before, after float64
	better        string // "higher", "lower" or ""
	verdict       string
	aLabel        string
	bLabel        string
	// shown is the index as the label prints it: a comparison's as its
	// sentence prints it (stats.Shown), so the chart never says 9.89 where
	// the sentence, the table and the verdict's row say 9.9.
	shown string
}

// shownIndex is a comparison's index as every display prints it.
type shownIndex interface{ Shown() stats.Shown }

// label is the index a group's label prints: the comparison's own, else
// the index rounded by the same rule, without an interval.
func (g barGroup) label() string {
	if g.shown != "" {
		return g.shown
	}
	return stats.ShowIndex(g.after, math.NaN(), math.NaN()).Index
}

// bars draws grouped index bars: plot.bars(data, title = None).
func bars(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var data starlark.Value
	var title string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &data, "title?", &title); err != nil {
		return nil, err
	}
	groups, err := barGroups(data)
	if err != nil {
		return nil, fmt.Errorf("%s: data: %w", b.Name(), err)
	}
	fig, err := drawBars(groups, title)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

func barGroups(data starlark.Value) ([]barGroup, error) {
	var groups []barGroup
	for i, v := range starval.Items(data) {
		g, err := barGroupOf(v)
		if err == nil && (math.IsNaN(g.after) || math.IsInf(g.after, 0)) {
			err = fmt.Errorf("%s: index is %v", g.name, g.after)
		}
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("nothing to draw (empty list)")
	}
	return groups, nil
}

// barGroupOf reads a comparison (index, metric, better, verdict, a_label,
// b_label) or a row {"name", "before", "after"[, "better", "verdict"]}.
func barGroupOf(v starlark.Value) (barGroup, error) {
	if _, isMap := v.(starlark.Mapping); !isMap {
		if idx, ok := starval.Number(starval.Attr(v, "index")); ok {
			g := barGroup{
				name: attrString(v, "metric"), before: 100, after: exactIndex(v, idx),
				better: attrString(v, "better"), verdict: attrString(v, "verdict"),
				aLabel: attrString(v, "a_label"), bLabel: attrString(v, "b_label"),
			}
			if s, ok := v.(shownIndex); ok {
				g.shown = s.Shown().Index
			}
			return g, nil
		}
	}
	return barRow(v)
}

// exactIndex is a comparison's unrounded index, 100 × its ratio: the index
// attribute is rounded, which would draw 0.8 as 1. A comparison without a
// ratio (a row, an older value) falls back to its means.
func exactIndex(cmp starlark.Value, rounded float64) float64 {
	if r, ok := starval.Number(starval.Attr(cmp, "ratio")); ok && r > 0 && !math.IsInf(r, 0) {
		return 100 * r
	}
	a, okA := starval.Number(starval.Attr(cmp, "mean_a"))
	b, okB := starval.Number(starval.Attr(cmp, "mean_b"))
	if !okA || !okB || a == 0 || math.IsNaN(b/a) || math.IsInf(b/a, 0) {
		return rounded
	}
	return 100 * b / a
}

func barRow(v starlark.Value) (barGroup, error) {
	get := func(name string) (starlark.Value, error) {
		x, ok := field(v, name)
		if !ok {
			return nil, fmt.Errorf("want a comparison or a row with %q, got %s", name, v.Type())
		}
		return x, nil
	}
	var g barGroup
	var vals [3]starlark.Value
	for i, name := range []string{"name", "before", "after"} {
		x, err := get(name)
		if err != nil {
			return g, err
		}
		vals[i] = x
	}
	g.name = stringOf(vals[0])
	before, ok1 := starval.Number(vals[1])
	after, ok2 := starval.Number(vals[2])
	if !ok1 || !ok2 {
		return g, fmt.Errorf("before and after must be numbers, got %s and %s", vals[1].Type(), vals[2].Type())
	}
	if before == 0 {
		return g, fmt.Errorf("%s: before must be a non-zero number, got %v", g.name, before)
	}
	g.before, g.after = 100, 100*after/before
	if x, ok := field(v, "better"); ok {
		g.better = stringOf(x)
	}
	if x, ok := field(v, "verdict"); ok {
		g.verdict = stringOf(x)
	}
	return g, nil
}

func stringOf(v starlark.Value) string {
	if s, ok := starlark.AsString(v); ok {
		return s
	}
	return v.String()
}

// barsTitle puts the direction in the title when all groups share it, and
// marks each group with an arrow otherwise.
func barsTitle(groups []barGroup, title string) (string, []string) {
	names := make([]string, len(groups))
	same := true
	for i, g := range groups {
		names[i] = shorten(g.name)
		same = same && g.better == groups[0].better
	}
	if title == "" {
		title = "Index, before = 100"
	}
	if same {
		if d := groups[0].better; d != "" {
			title += " (" + d + " is better)"
		}
		return title, names
	}
	for i, g := range groups {
		switch g.better {
		case "higher":
			names[i] += " ↑"
		case "lower":
			names[i] += " ↓"
		}
	}
	return title + " (↑ higher is better, ↓ lower is better)", names
}

func drawBars(groups []barGroup, title string) (*Figure, error) {
	title, names := barsTitle(groups, title)
	logY := wantsLogIndex(groups)
	ylabel := "index (before = 100)"
	if logY {
		ylabel += ", log scale"
	}
	c := newChart(title, "", ylabel)
	c.grid.Vertical.Color = nil
	n := len(groups)
	width := vg.Length(math.Min(36, 0.3*340/float64(n)))
	before, after := make(plotter.Values, n), make(plotter.Values, n)
	for i, g := range groups {
		before[i], after[i] = g.before, g.after
	}
	floor := 0.0
	if logY {
		floor = logFloor(groups)
	}
	bb, err := barsFrom(before, floor, width, -width/2)
	if err != nil {
		return nil, err
	}
	ab, err := barsFrom(after, floor, width, width/2)
	if err != nil {
		return nil, err
	}
	bb.Color, ab.Color = grey, colorAt(0)
	c.p.Add(bb, ab, referenceLine(n), verdictLabels(groups, width))
	c.p.NominalX(names...)
	if n > 5 { // slant the names so that long ones do not overlap
		c.p.X.Tick.Label.Rotation = math.Pi / 6
		c.p.X.Tick.Label.XAlign, c.p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	c.p.X.Min, c.p.X.Max = -0.5, float64(n)-0.5
	indexRange(c.p, groups, floor, logY)
	aLabel, bLabel := armLabels(groups)
	c.add(aLabel, bb)
	c.add(bLabel, ab)
	return c.figure()
}

// logIndexSpread is the ratio between the largest and the smallest index
// (100 included) past which bars move to a log axis: on a linear one the
// small bars of a mix such as tps at 11,565 and p99 at 3 flatten to
// nothing, while a log axis gives a halving and a doubling the same length.
const logIndexSpread = 10

func wantsLogIndex(groups []barGroup) bool {
	lo, hi := 100.0, 100.0
	for _, g := range groups {
		if g.after <= 0 {
			return false // a log axis cannot show it
		}
		lo, hi = math.Min(lo, g.after), math.Max(hi, g.after)
	}
	return hi/lo > logIndexSpread
}

// logFloor is where bars start on a log axis: a round value a few times
// below the smallest index, so that even the smallest bar has length.
func logFloor(groups []barGroup) float64 {
	lo := 100.0
	for _, g := range groups {
		lo = math.Min(lo, g.after)
	}
	return niceBelow(lo / 3)
}

// barsFrom draws bars from floor (0 on a linear axis) up to each value:
// they are stacked on an undrawn base of height floor, since a log axis
// has no 0 for gonum's bars to start from.
func barsFrom(values plotter.Values, floor float64, width, offset vg.Length) (*plotter.BarChart, error) {
	if floor == 0 {
		b, err := plotter.NewBarChart(values, width)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width, b.Offset = 0, offset
		return b, nil
	}
	base := make(plotter.Values, len(values))
	above := make(plotter.Values, len(values))
	for i, v := range values {
		base[i], above[i] = floor, v-floor
	}
	on, err := plotter.NewBarChart(base, width)
	if err != nil {
		return nil, err
	}
	b, err := plotter.NewBarChart(above, width)
	if err != nil {
		return nil, err
	}
	b.StackOn(on)
	b.LineStyle.Width, b.Offset = 0, offset
	return b, nil
}

// indexRange sets the y axis: linear from 0 (or the lowest negative
// index) with 15% headroom for the labels, or log from floor.
func indexRange(p *gplot.Plot, groups []barGroup, floor float64, logY bool) {
	top, bottom := 100.0, 0.0
	for _, g := range groups {
		top, bottom = math.Max(top, g.after), math.Min(bottom, g.after)
	}
	if !logY {
		p.Y.Min, p.Y.Max = bottom*1.15, top*1.15
		return
	}
	p.Y.Scale, p.Y.Tick.Marker = gplot.LogScale{}, logTicks{}
	p.Y.Min, p.Y.Max = floor, top*1.6
}

// armLabels names the legend entries after the comparison's arms when
// every group has the same ones.
func armLabels(groups []barGroup) (string, string) {
	a, b := groups[0].aLabel, groups[0].bLabel
	for _, g := range groups {
		if g.aLabel != a || g.bLabel != b {
			a, b = "", ""
		}
	}
	if a == "" || b == "" {
		return "before", "after"
	}
	return "before: " + a, "after: " + b
}

// referenceLine is the dashed before = 100 line across the groups.
func referenceLine(n int) *plotter.Line {
	l, _ := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 100}, {X: float64(n) - 0.5, Y: 100}})
	l.Color = color50
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	l.Width = vg.Points(0.8)
	return l
}

// verdictLabels writes each group's verdict word (and index) above its
// "after" bar.
func verdictLabels(groups []barGroup, width vg.Length) gplot.Plotter {
	xy := plotter.XYLabels{XYs: make(plotter.XYs, len(groups)), Labels: make([]string, len(groups))}
	for i, g := range groups {
		xy.XYs[i] = plotter.XY{X: float64(i), Y: math.Max(g.after, 100)}
		xy.Labels[i] = strings.TrimSpace(g.label() + " " + g.verdict)
	}
	l, _ := plotter.NewLabels(xy)
	for i := range l.TextStyle {
		l.TextStyle[i] = text.Style{
			Font: font.From(sans, 8), XAlign: draw.XCenter, YAlign: draw.YBottom,
			Handler: gplot.DefaultTextHandler, Color: color50,
		}
	}
	l.Offset = vg.Point{X: width / 2, Y: vg.Points(2)}
	return l
}
