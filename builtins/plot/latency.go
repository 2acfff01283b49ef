package plot

import (
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// pointsPerDecade bounds the size of a percentile curve: five decades of
// 1/(1-p) at this density is a few KB of SVG per line.
const pointsPerDecade = 24

// maxInverse is the far end of the x axis: the 99.999th percentile.
const maxInverse = 1e5

// latency draws percentile distributions:
// plot.latency(runs, labels = None, title = None, log_y = False).
func latency(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var runs, labels starlark.Value = nil, starlark.None
	var title string
	var logY bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"runs", &runs, "labels?", &labels, "title?", &title, "log_y?", &logY); err != nil {
		return nil, err
	}
	curves, err := latencyCurves(runs, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if title == "" {
		title = "Latency by percentile"
	}
	fig, err := drawLatency(curves, title, logY)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

// curve is one run's distribution as (1/(1-p), ms) points.
type curve struct {
	label string
	xys   plotter.XYs
}

func latencyCurves(runs, labels starlark.Value) ([]curve, error) {
	rs, labels := runItems(runs, labels)
	names, err := labelsFor(rs, labels)
	if err != nil {
		return nil, err
	}
	var out []curve
	for i, r := range rs {
		h, ok := r.(hdrer)
		if !ok {
			return nil, fmt.Errorf("runs: item %d is a %s, want a run or a histogram", i, r.Type())
		}
		if xys := percentileCurve(h.Hdr()); len(xys) > 0 {
			out = append(out, curve{label: names[i], xys: xys})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("runs: no latency recorded in any run")
	}
	return out, nil
}

// runItems are the runs to draw: a list of runs, one run, or a dict of
// runs by name (a mix's run.by_tag, workload.concurrent's scenarios),
// whose names label them unless labels does.
func runItems(runs, labels starlark.Value) ([]starlark.Value, starlark.Value) {
	m, ok := runs.(starlark.IterableMapping)
	if !ok {
		return starval.Items(runs), labels
	}
	var vs, names []starlark.Value
	for _, kv := range m.Items() {
		names, vs = append(names, kv[0]), append(vs, kv[1])
	}
	if labels == starlark.None {
		labels = starlark.NewList(names)
	}
	return vs, labels
}

// labelsFor returns the legend label of each value: labels[i], else the
// value's .label, else "run i+1".
func labelsFor(vs []starlark.Value, labels starlark.Value) ([]string, error) {
	var given []starlark.Value
	if labels != starlark.None {
		given = starval.Items(labels)
		if len(given) != len(vs) {
			return nil, fmt.Errorf("labels: got %d labels for %d runs", len(given), len(vs))
		}
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		switch {
		case given != nil:
			out[i] = stringOf(given[i])
		case attrString(v, "label") != "":
			out[i] = attrString(v, "label")
		default:
			out[i] = fmt.Sprintf("run %d", i+1)
		}
	}
	return out, nil
}

// percentileCurve samples the distribution on a log grid of 1/(1-p), up to
// the last percentile the sample count resolves (1/(1-p) <= count): p100
// itself sits at infinity on this axis and is left out.
func percentileCurve(h *hdrhistogram.Histogram) plotter.XYs {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	end := math.Min(maxInverse, float64(n))
	steps := int(math.Ceil(math.Log10(math.Max(end, 2)) * pointsPerDecade))
	xys := make(plotter.XYs, 0, steps+1)
	for i := 0; i <= steps; i++ {
		x := math.Min(end, math.Pow(10, float64(i)/pointsPerDecade))
		p := 100 * (1 - 1/x)
		xys = append(xys, plotter.XY{X: x, Y: float64(h.ValueAtQuantile(p)) / 1000})
	}
	return dropFlat(xys)
}

// dropFlat removes the inner points of horizontal stretches (a step of
// the distribution), which draw nothing but cost bytes.
func dropFlat(xys plotter.XYs) plotter.XYs {
	out := xys[:0:0]
	for i, p := range xys {
		if i > 0 && i < len(xys)-1 && xys[i-1].Y == p.Y && xys[i+1].Y == p.Y {
			continue
		}
		out = append(out, p)
	}
	return out
}

var percentileTicks = []gplot.Tick{
	{Value: 1, Label: "0%"}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
	{Value: 100, Label: "99%"}, {Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"},
	{Value: 1e5, Label: "99.999%"},
}

func drawLatency(curves []curve, title string, logY bool) (*Figure, error) {
	c := newChart(title, "percentile", "latency (ms)")
	c.p.X.Scale = gplot.LogScale{}
	c.p.X.Tick.Marker = gplot.ConstantTicks(percentileTicks)
	xmax, ylo, yhi := 1.0, math.Inf(1), 0.0
	for i, cv := range curves {
		if logY {
			cv.xys = positive(cv.xys)
		}
		ylo, yhi = math.Min(ylo, cv.xys[0].Y), math.Max(yhi, cv.xys[len(cv.xys)-1].Y)
		l, err := plotter.NewLine(cv.xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = colorAt(i), vg.Points(1.5)
		c.p.Add(l)
		c.add(cv.label, l)
		xmax = math.Max(xmax, cv.xys[len(cv.xys)-1].X)
	}
	c.p.X.Min, c.p.X.Max = 1, math.Max(10, xmax)
	if logY {
		c.p.Y.Scale = gplot.LogScale{}
		// gonum widens a flat range by ±1, below zero: give it a decade.
		c.p.Y.Min, c.p.Y.Max = ylo/math.Sqrt(10), math.Max(yhi, ylo*math.Sqrt(10))
		c.p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	} else {
		c.p.Y.Min = 0
		headroom(c.p)
	}
	return c.figure()
}

// positive replaces values a log axis cannot show (0 µs rounds to 0 ms)
// with the smallest positive value of the curve, or 1 µs.
func positive(xys plotter.XYs) plotter.XYs {
	floor := math.Inf(1)
	for _, p := range xys {
		if p.Y > 0 {
			floor = math.Min(floor, p.Y)
		}
	}
	if math.IsInf(floor, 1) {
		floor = 0.001
	}
	out := make(plotter.XYs, len(xys))
	for i, p := range xys {
		out[i] = plotter.XY{X: p.X, Y: math.Max(p.Y, floor)}
	}
	return out
}
