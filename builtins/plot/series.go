package plot

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/benchbook/benchbook/builtins/internal/metricname"
	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// maxSeriesPoints bounds a time series line, and seriesBudget all lines of
// a figure together; longer runs are downsampled.
const (
	maxSeriesPoints = 240
	seriesBudget    = 1200
)

// series draws per-window time series:
// plot.series(runs, metric = "rps", labels = None, title = None).
func series(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var runs, labels starlark.Value = nil, starlark.None
	var metric starlark.Value = starlark.String("rps")
	var title string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"runs", &runs, "metric?", &metric, "labels?", &labels, "title?", &title); err != nil {
		return nil, err
	}
	if err := checkMetric(metric); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if ws, ok := soakWindows(runs); ok {
		return soakSeries(th, b, ws, metric, title)
	}
	rs, labels := runItems(runs, labels)
	names, err := labelsFor(rs, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	lines, step, err := seriesLines(th, rs, metric)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	fig, err := drawSeries(lines, names, seriesOptions{metric: metricName(metric), title: title, step: step})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

func checkMetric(metric starlark.Value) error {
	switch metric.(type) {
	case starlark.String, starlark.Callable:
		return nil
	}
	return fmt.Errorf("metric: want a name or a function, got %s", metric.Type())
}

func metricName(metric starlark.Value) string {
	if s, ok := metric.(starlark.String); ok {
		return string(s)
	}
	if f, ok := metric.(starlark.Callable); ok {
		return f.Name()
	}
	return metric.String()
}

// seriesLines reads (start, metric) of every window of every run, and
// downsamples each so no line has more than maxSeriesPoints; step is the
// number of windows merged into one point (1: none).
func seriesLines(th *starlark.Thread, rs []starlark.Value, metric starlark.Value) ([]plotter.XYs, int, error) {
	lines := make([]plotter.XYs, len(rs))
	step := 1
	limit := max(60, min(maxSeriesPoints, seriesBudget/max(1, len(rs))))
	for i, r := range rs {
		ws := starval.Attr(r, "windows")
		if ws == nil {
			return nil, 0, fmt.Errorf("runs: item %d is a %s without windows", i, r.Type())
		}
		xys, err := windowPoints(th, starval.Items(ws), metric)
		if err != nil {
			return nil, 0, fmt.Errorf("runs: item %d: %w", i, err)
		}
		var s int
		lines[i], s = downsample(xys, limit, keepsPeaks(metric))
		step = max(step, s)
	}
	return lines, step, nil
}

func windowPoints(th *starlark.Thread, ws []starlark.Value, metric starlark.Value) (plotter.XYs, error) {
	xys := make(plotter.XYs, 0, len(ws))
	for j, w := range ws {
		x, ok := starval.Number(starval.Attr(w, "start"))
		if !ok {
			return nil, fmt.Errorf("window %d has no numeric start", j)
		}
		y, err := starval.Metric(th, w, metric)
		if err != nil {
			return nil, fmt.Errorf("window %d: %w", j, err)
		}
		if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
			continue // a window without data: a gap is honest
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
	}
	return xys, nil
}

// keepsPeaks says whether merged windows keep their maximum (latency
// percentiles: a spike must stay visible) rather than their mean.
func keepsPeaks(metric starlark.Value) bool {
	name := metricName(metric)
	return isPercentile(name) || name == "max"
}

func isPercentile(name string) bool { _, ok := metricname.Percentile(name); return ok }

// downsample merges runs of consecutive points so at most limit remain.
func downsample(xys plotter.XYs, limit int, peaks bool) (plotter.XYs, int) {
	if len(xys) <= limit {
		return xys, 1
	}
	step := (len(xys) + limit - 1) / limit
	out := make(plotter.XYs, 0, limit)
	for i := 0; i < len(xys); i += step {
		chunk := xys[i:min(i+step, len(xys))]
		y := chunk[0].Y
		sum := 0.0
		for _, p := range chunk {
			sum += p.Y
			y = math.Max(y, p.Y)
		}
		if !peaks {
			y = sum / float64(len(chunk))
		}
		out = append(out, plotter.XY{X: chunk[0].X, Y: y})
	}
	return out, step
}

type seriesOptions struct {
	metric string
	title  string
	step   int    // windows per point after downsampling
	xlabel string // "time (s)" when empty
	// fitY fits the y axis to the data instead of starting at 0: a soak
	// looks for growth, and 5 MB on 500 MB is invisible from 0.
	fitY bool
}

// unitOf is the y axis label of a window metric.
func unitOf(metric string) string {
	switch {
	case metric == "rps":
		return "requests/s"
	case isPercentile(metric), metric == "mean", metric == "max":
		return metric + " latency (ms)"
	case metric == "count":
		return "requests per window"
	}
	return metric
}

func drawSeries(lines []plotter.XYs, names []string, o seriesOptions) (*Figure, error) {
	title := o.title
	if title == "" {
		title = strings.TrimSpace(o.metric + " per window")
	}
	if o.step > 1 {
		how := "mean"
		if isPercentile(o.metric) || o.metric == "max" {
			how = "max"
		}
		title += fmt.Sprintf(" (%s of every %d windows)", how, o.step)
	}
	xlabel := o.xlabel
	if xlabel == "" {
		xlabel = "time (s)"
	}
	c := newChart(title, xlabel, unitOf(o.metric))
	for i, xys := range lines {
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = colorAt(i), vg.Points(1.2)
		c.p.Add(l)
		c.add(names[i], l)
	}
	if o.fitY {
		padY(c.p)
		if n := len(lines[0]); n > 0 { // whole windows: no 0.5 ticks
			c.p.X.Tick.Marker = windowTicks(int(lines[0][n-1].X) + 1)
			c.p.X.Min, c.p.X.Max = -0.2, lines[0][n-1].X+0.2
		}
		return c.figure()
	}
	if linesApart(lines) {
		// Runs of very different size (30 req/s beside 3,000): from 0 on
		// a linear axis the small one is a flat line on the floor.
		c.p.Y.Scale, c.p.Y.Tick.Marker = gplot.LogScale{}, logTicks{}
		c.p.Y.Label.Text += ", log scale"
		c.p.Y.Min, c.p.Y.Max = c.p.Y.Min/1.25, c.p.Y.Max*1.25
		return c.figure()
	}
	c.p.Y.Min = 0
	headroom(c.p)
	return c.figure()
}

// linesApart says whether the lines' medians differ by more than
// logIndexSpread and every value is positive (a log axis can show them).
// Spikes within one line do not count: they read well from 0.
func linesApart(lines []plotter.XYs) bool {
	lo, hi := math.Inf(1), 0.0
	for _, xys := range lines {
		if len(xys) == 0 {
			continue
		}
		ys := make([]float64, len(xys))
		for i, p := range xys {
			if p.Y <= 0 {
				return false
			}
			ys[i] = p.Y
		}
		sort.Float64s(ys)
		m := ys[len(ys)/2]
		lo, hi = math.Min(lo, m), math.Max(hi, m)
	}
	return hi > 0 && hi/lo > logIndexSpread
}

// soakWindows recognises a soak's result (struct(windows, checks, ...))
// or a list of its window results (dicts or structs without windows of
// their own): one value per soak window rather than runs with windows.
func soakWindows(v starlark.Value) ([]starlark.Value, bool) {
	if starval.Attr(v, "checks") != nil {
		if ws := starval.Attr(v, "windows"); ws != nil {
			return starval.Items(ws), true
		}
	}
	list, isList := v.(*starlark.List)
	if !isList || list.Len() == 0 {
		return nil, false
	}
	for _, w := range starval.Items(list) {
		_, isMap := w.(starlark.Mapping)
		if starval.Attr(w, "windows") != nil || (!isMap && starval.Attr(w, "start") != nil) {
			return nil, false
		}
		if _, ok := w.(starlark.HasAttrs); !ok && !isMap {
			return nil, false
		}
	}
	return starval.Items(list), true
}

// soakSeries draws one point per soak window (x: the window's index, as
// the soak's checks name windows).
func soakSeries(th *starlark.Thread, b *starlark.Builtin, ws []starlark.Value, metric starlark.Value, title string) (starlark.Value, error) {
	xys := make(plotter.XYs, 0, len(ws))
	for i, w := range ws {
		y, err := starval.Metric(th, w, metric)
		if err != nil {
			return nil, fmt.Errorf("%s: soak window %d: %w", b.Name(), i, err)
		}
		if !math.IsNaN(y) && !math.IsInf(y, 0) {
			xys = append(xys, plotter.XY{X: float64(i), Y: y})
		}
	}
	line, step := downsample(xys, maxSeriesPoints, keepsPeaks(metric))
	name := metricName(metric)
	if title == "" {
		title = name + " per soak window"
	}
	fig, err := drawSeries([]plotter.XYs{line}, []string{name}, seriesOptions{metric: name, title: title, step: step, xlabel: "soak window", fitY: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

// windowTicks marks whole window numbers 0..n-1, about ten of them.
func windowTicks(n int) gplot.ConstantTicks {
	every := max(1, int(niceStep(float64(n)/10)))
	var ticks []gplot.Tick
	for i := 0; i < n; i += every {
		ticks = append(ticks, gplot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
	}
	return ticks
}
