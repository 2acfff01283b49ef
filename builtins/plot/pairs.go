package plot

import (
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// pairs draws every run of an experiment as a point per pair and arm:
// plot.pairs(exp, metric = "rps", title = None).
func pairs(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var exp starlark.Value
	var metric starlark.Value = starlark.String("rps")
	var title string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "exp", &exp, "metric?", &metric, "title?", &title); err != nil {
		return nil, err
	}
	if err := checkMetric(metric); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	arms, left, err := armValues(th, exp, metric)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if title == "" {
		title = metricName(metric) + " of every run, by pair and arm"
	}
	runs, _ := starval.Attr(exp, "runs").(starlark.Mapping)
	conds := conditionsOf(exp, arms, runs, func(pair, a int) float64 { return float64(pair+1) + dodge(len(arms), a) })
	if len(left) > 0 && !anyValue(arms) {
		return nil, fmt.Errorf("%s: no run has a value of %s (left out: %s)", b.Name(), metricName(metric), strings.Join(left, ", "))
	}
	xlabel := "pair"
	if len(left) > 0 {
		xlabel += "\nleft out, not valid: " + leftOut(left)
	}
	fig, err := drawPairs(arms, conds, title, xlabel, unitOf(metricName(metric)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

// arm is one arm's metric values in pair order.
type arm struct {
	name   string
	values []float64
}

// armValues reads exp.arms (order, baseline first) and exp.runs (arm ->
// runs in pair order) and evaluates the metric on every run. A run that is
// not valid and has no value for the metric (a capacity search refused:
// the generator set the pace) is NaN, a gap, and left names it ("B pair
// 1"); any other run without a number is an error.
func armValues(th *starlark.Thread, exp, metric starlark.Value) (_ []arm, left []string, _ error) {
	runs, ok := starval.Attr(exp, "runs").(starlark.Mapping)
	if !ok {
		return nil, nil, fmt.Errorf("exp: want an experiment with runs (a dict arm -> runs), got %s", exp.Type())
	}
	names, err := armNames(exp, runs)
	if err != nil {
		return nil, nil, err
	}
	out := make([]arm, len(names))
	for i, name := range names {
		rs, found, _ := runs.Get(starlark.String(name))
		if !found {
			return nil, nil, fmt.Errorf("exp: arm %q has no runs", name)
		}
		out[i].name = name
		for j, r := range starval.Items(rs) {
			v, err := starval.Metric(th, r, metric)
			if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				err = fmt.Errorf("metric %s gave %v", metricName(metric), v)
			}
			if err != nil {
				if invalidWithout(r, metric) {
					left = append(left, fmt.Sprintf("%s pair %d", name, j+1))
					out[i].values = append(out[i].values, math.NaN())
					continue
				}
				return nil, nil, fmt.Errorf("metric: arm %s, pair %d: %w", name, j+1, err)
			}
			out[i].values = append(out[i].values, v)
		}
	}
	return out, left, nil
}

// anyValue reports whether some run of some arm has a value (not NaN).
func anyValue(arms []arm) bool {
	for _, a := range arms {
		for _, v := range a.values {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// invalidWithout reports whether run r says it is not valid (r.valid is
// False) and has no value for the metric (the named attribute is None).
func invalidWithout(r, metric starlark.Value) bool {
	name, ok := metric.(starlark.String)
	return ok && starval.Attr(r, "valid") == starlark.False && starval.Attr(r, string(name)) == starlark.None
}

// leftOut lists the runs left out, the first four by name.
func leftOut(left []string) string {
	if len(left) <= 4 {
		return strings.Join(left, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(left[:4], ", "), len(left)-4)
}

func armNames(exp starlark.Value, runs starlark.Mapping) ([]string, error) {
	src := starval.Attr(exp, "arms")
	if src == nil {
		keys, ok := runs.(starlark.IterableMapping)
		if !ok {
			return nil, fmt.Errorf("exp: has no arms")
		}
		var names []string
		for _, kv := range keys.Items() {
			names = append(names, stringOf(kv[0]))
		}
		return names, nil
	}
	var names []string
	for _, a := range starval.Items(src) {
		names = append(names, stringOf(a))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("exp: has no arms")
	}
	return names, nil
}

// drawPairs puts pair numbers on x and the arms side by side within each
// pair; a thin grey segment joins the arms of one pair so that "every B
// beats every A" reads as all segments sloping the same way.
func drawPairs(arms []arm, conds []condition, title, xlabel, ylabel string) (*Figure, error) {
	c := newChart(title, xlabel, ylabel)
	npairs := 0
	for _, a := range arms {
		npairs = max(npairs, len(a.values))
	}
	if npairs == 0 {
		return nil, fmt.Errorf("exp: no runs")
	}
	if len(conds) > 0 {
		c.below, c.stripHeight = conditionsStrip(conds, npairs), vg.Points(42)
	}
	dodge := func(i int) float64 { return dodge(len(arms), i) }
	for p := range npairs {
		var seg plotter.XYs
		for i, a := range arms {
			if p < len(a.values) && !math.IsNaN(a.values[p]) {
				seg = append(seg, plotter.XY{X: float64(p+1) + dodge(i), Y: a.values[p]})
			}
		}
		if len(seg) > 1 {
			l, _ := plotter.NewLine(seg)
			l.Color, l.Width = grey, vg.Points(0.8)
			c.p.Add(l)
		}
	}
	for i, a := range arms {
		var xys plotter.XYs
		for p, v := range a.values {
			if !math.IsNaN(v) {
				xys = append(xys, plotter.XY{X: float64(p+1) + dodge(i), Y: v})
			}
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: colorAt(i), Radius: vg.Points(3.5), Shape: armShape(i)}
		c.p.Add(s)
		c.add(a.name, s)
	}
	c.p.X.Min, c.p.X.Max = 0.5, float64(npairs)+0.5
	c.p.X.Tick.Marker = pairTicks(npairs)
	c.grid.Vertical.Color = nil
	if spreadRatio(arms) > logIndexSpread {
		// Arms of very different size (30 tps beside 3,000): on a linear
		// axis the small arm sits on the zero line, on a log one each
		// arm's spread shows at its own scale.
		c.p.Y.Scale, c.p.Y.Tick.Marker = gplot.LogScale{}, logTicks{}
		c.p.Y.Label.Text += ", log scale"
		c.p.Y.Min, c.p.Y.Max = c.p.Y.Min/1.25, c.p.Y.Max*1.25
		return c.figure()
	}
	padY(c.p)
	return c.figure()
}

// spreadRatio is the largest value over the smallest, or 0 when a value
// is not positive (no log axis then).
func spreadRatio(arms []arm) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, a := range arms {
		for _, v := range a.values {
			if math.IsNaN(v) {
				continue
			}
			if v <= 0 {
				return 0
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return hi / lo
}

// dodge is arm i's offset from its pair's x, so that arms sit side by side.
func dodge(arms, i int) float64 {
	return 0.3 * (float64(i) - float64(arms-1)/2) / float64(max(1, arms-1))
}

// armShape gives each arm its own glyph so that arms differ without colour.
func armShape(i int) draw.GlyphDrawer {
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}}
	return shapes[i%len(shapes)]
}

// pairTicks labels pairs 1..n, thinning labels beyond 20 pairs.
func pairTicks(n int) gplot.ConstantTicks {
	every := max(1, (n+19)/20)
	var ticks []gplot.Tick
	for p := 1; p <= n; p++ {
		t := gplot.Tick{Value: float64(p)}
		if p%every == 0 || p == 1 {
			t.Label = fmt.Sprint(p)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// padY widens the y range by 8% on each side so points do not sit on the
// frame; a flat range gets a visible height.
func padY(p *gplot.Plot) {
	lo, hi := p.Y.Min, p.Y.Max
	pad := 0.08 * (hi - lo)
	if pad == 0 {
		pad = 0.05*abs(hi) + 1
	}
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
