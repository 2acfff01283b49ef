package plot

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// capacityPlot draws capacity searches:
// plot.capacity(caps, metric = None, labels = None, title = None, log_x = False).
// caps is a capacity, a list of them, or an experiment whose runs are
// capacities (one colour per arm). Each run of a search is a point at its
// level: filled where it met the SLO, a cross where it broke it, ringed
// when the box was busy; a line joins the levels' medians; the SLO is a
// dashed line and each crossing a shaded band over its interval with the
// capacity marked. y is on a log axis (values at or below 0 are raised to
// the smallest positive one: a log axis cannot show them).
func capacityPlot(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var caps, labels starlark.Value = nil, starlark.None
	var metric, title string
	var logX bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "caps", &caps, "metric?", &metric, "labels?", &labels, "title?", &title, "log_x?", &logX); err != nil {
		return nil, err
	}
	groups, err := capacityGroups(caps, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if metric == "" {
		metric = defaultCapacityMetric(groups[0].caps[0])
	}
	fig, err := drawCapacity(groups, metric, title, logX)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

// capGroup is the searches drawn in one colour: one capacity, or an arm's.
type capGroup struct {
	name string
	caps []starlark.Value
}

// capacityGroups reads caps: one capacity, a list, or an experiment.
func capacityGroups(caps, labels starlark.Value) ([]capGroup, error) {
	if runs, ok := starval.Attr(caps, "runs").(starlark.Mapping); ok && caps.Type() != "capacity" {
		names, err := armNames(caps, runs)
		if err != nil {
			return nil, err
		}
		var out []capGroup
		for _, n := range names {
			rs, _, _ := runs.Get(starlark.String(n))
			g := capGroup{name: n, caps: starval.Items(rs)}
			out = append(out, g)
		}
		return out, checkCaps(out)
	}
	var list []starlark.Value
	if caps.Type() == "capacity" {
		list = []starlark.Value{caps}
	} else if _, ok := caps.(starlark.Iterable); ok {
		list = starval.Items(caps)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("caps: want a capacity, a list of capacities or an experiment of them, got %s", caps.Type())
	}
	names, err := labelsFor(list, labels)
	if err != nil {
		return nil, err
	}
	var out []capGroup
	for i, c := range list {
		name := names[i]
		if labels == starlark.None {
			name = attrString(c, "label")
			if name == "" && len(list) > 1 {
				name = fmt.Sprint(i + 1)
			}
		}
		out = append(out, capGroup{name: name, caps: []starlark.Value{c}})
	}
	return out, checkCaps(out)
}

func checkCaps(groups []capGroup) error {
	for _, g := range groups {
		for _, c := range g.caps {
			if c.Type() != "capacity" {
				return fmt.Errorf("caps: want capacities (from capacity(...)), got a %s", c.Type())
			}
		}
	}
	return nil
}

// defaultCapacityMetric is the limit that broke first, else the SLO's first.
func defaultCapacityMetric(c starlark.Value) string {
	if m := attrString(c, "limiting"); m != "" {
		return m
	}
	if slo, ok := starval.Attr(c, "slo").(starlark.IterableMapping); ok && len(slo.Items()) > 0 {
		return stringOf(slo.Items()[0][0])
	}
	return ""
}

// capPoint is one run of a search as drawn.
type capPoint struct {
	x, y         float64
	passed, busy bool
}

// capSearch is what one capacity gives the chart.
type capSearch struct {
	points   []capPoint
	medians  plotter.XYs
	low      float64 // the interval, NaN when none
	high     float64 // +Inf above the range
	value    float64 // NaN when refused
	limit    float64 // the SLO's limit on the metric, NaN when it has none
	limitTxt string
	unit     string
}

func readCapacity(c starlark.Value, metric string) (capSearch, error) {
	s := capSearch{low: math.NaN(), high: math.NaN(), value: math.NaN(), limit: math.NaN(), unit: attrString(c, "unit")}
	for _, p := range starval.Items(starval.Attr(c, "points")) {
		figs, _ := starval.Attr(p, "figures").(starlark.Mapping)
		if figs == nil {
			continue
		}
		y, found, _ := figs.Get(starlark.String(metric))
		if !found {
			return s, fmt.Errorf("metric: the search has no figure %q (its SLO names %s)", metric, starval.Attr(c, "slo"))
		}
		x, _ := starval.Number(starval.Attr(p, "level"))
		v, _ := starval.Number(y)
		s.points = append(s.points, capPoint{x: x, y: v, passed: truthOf(starval.Attr(p, "passed")), busy: truthOf(starval.Attr(p, "busy"))})
	}
	for _, l := range starval.Items(starval.Attr(c, "levels")) {
		med, _ := starval.Attr(l, "median").(starlark.Mapping)
		if med == nil {
			continue
		}
		y, _, _ := med.Get(starlark.String(metric))
		x, _ := starval.Number(starval.Attr(l, "level"))
		if v, ok := starval.Number(y); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			s.medians = append(s.medians, plotter.XY{X: x, Y: v})
		}
	}
	if iv, ok := starval.Attr(c, "interval").(starlark.Tuple); ok && len(iv) == 2 {
		if v, ok := starval.Number(iv[0]); ok {
			s.low = v
		}
		s.high = math.Inf(1)
		if v, ok := starval.Number(iv[1]); ok {
			s.high = v
		}
		if math.IsNaN(s.low) {
			s.high = math.NaN()
		}
	}
	if v, ok := starval.Number(starval.Attr(c, "value")); ok {
		s.value = v
	}
	if slo, ok := starval.Attr(c, "slo").(starlark.Mapping); ok {
		if y, found, _ := slo.Get(starlark.String(metric)); found {
			s.limit, _ = starval.Number(y)
		}
	}
	if len(s.points) == 0 {
		return s, fmt.Errorf("caps: a capacity without runs")
	}
	return s, nil
}

func truthOf(v starlark.Value) bool { return v != nil && bool(v.Truth()) }

// drawCapacity draws the groups' searches.
func drawCapacity(groups []capGroup, metric, title string, logX bool) (*Figure, error) {
	var all [][]capSearch
	var floor, xlo, xhi = math.Inf(1), math.Inf(1), math.Inf(-1)
	unit := ""
	for _, g := range groups {
		var ss []capSearch
		for _, c := range g.caps {
			s, err := readCapacity(c, metric)
			if err != nil {
				return nil, err
			}
			for _, p := range s.points {
				if p.y > 0 {
					floor = math.Min(floor, p.y)
				}
				xlo, xhi = math.Min(xlo, p.x), math.Max(xhi, p.x)
			}
			if s.limit > 0 {
				floor = math.Min(floor, s.limit)
			}
			unit = s.unit
			ss = append(ss, s)
		}
		all = append(all, ss)
	}
	if math.IsInf(floor, 1) {
		floor = 0.001
	}
	if title == "" {
		title = metric + " by load, and the capacity at the SLO"
	}
	xlabel := "load"
	if unit != "" {
		xlabel = "load (" + unit + ")"
	}
	c := newChart(title, xlabel, unitOf(metric)+", log scale")
	c.p.Y.Scale, c.p.Y.Tick.Marker = gplot.LogScale{}, logTicks{}
	if logX && xlo > 0 {
		c.p.X.Scale, c.p.X.Tick.Marker = gplot.LogScale{}, logTicks{}
	}
	ylo, yhi := math.Inf(1), 0.0
	for gi, ss := range all {
		col := colorAt(gi)
		for si, s := range ss {
			if err := drawSearch(c, s, col, floor, gi, si == 0 && groups[gi].name != "", groups[gi].name); err != nil {
				return nil, err
			}
			for _, p := range s.points {
				y := math.Max(p.y, floor)
				if !math.IsInf(y, 0) {
					ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
				}
			}
		}
	}
	if err := drawLimits(c, all, xlo, xhi, metric); err != nil {
		return nil, err
	}
	for _, ss := range all {
		for _, s := range ss {
			if s.limit > 0 {
				ylo, yhi = math.Min(ylo, s.limit), math.Max(yhi, s.limit)
			}
		}
	}
	addMarkLegend(c)
	c.p.Y.Min, c.p.Y.Max = ylo/1.5, math.Max(yhi*1.5, ylo*10)
	pad := (xhi - xlo) * 0.04
	if logX && xlo > 0 {
		c.p.X.Min, c.p.X.Max = xlo/1.15, xhi*1.15
	} else {
		c.p.X.Min, c.p.X.Max = math.Max(0, xlo-pad), xhi+pad
	}
	return c.figure()
}

// drawSearch draws one search: the interval's band and the capacity, the
// medians' line, every run.
func drawSearch(c *chart, s capSearch, col color.Color, floor float64, group int, legend bool, name string) error {
	if !math.IsNaN(s.low) {
		hi := s.high
		if math.IsInf(hi, 1) {
			hi = s.low
		}
		band := bandPolygon(s.low, hi, col)
		c.p.Add(band)
	}
	if len(s.medians) > 0 {
		med := slices.Clone(s.medians)
		for i := range med {
			med[i].Y = math.Max(med[i].Y, floor)
		}
		slices.SortFunc(med, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, err := plotter.NewLine(med)
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(1.2)
		c.p.Add(l)
		if legend {
			c.add(name, l)
		}
	}
	if !math.IsNaN(s.value) {
		v := &capMark{x: s.value, col: col}
		c.p.Add(v)
	}
	var passed, failed, busy plotter.XYs
	for _, p := range s.points {
		xy := plotter.XY{X: p.x, Y: math.Max(p.y, floor)}
		if math.IsInf(xy.Y, 0) || math.IsNaN(xy.Y) {
			continue
		}
		if p.passed {
			passed = append(passed, xy)
		} else {
			failed = append(failed, xy)
		}
		if p.busy {
			busy = append(busy, xy)
		}
	}
	for _, set := range []struct {
		xys   plotter.XYs
		shape draw.GlyphDrawer
		col   color.Color
		r     vg.Length
	}{
		{passed, draw.CircleGlyph{}, col, vg.Points(2.5)},
		{failed, draw.CrossGlyph{}, col, vg.Points(3)},
		{busy, draw.RingGlyph{}, busyColor, vg.Points(5)},
	} {
		if len(set.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: set.col, Radius: set.r, Shape: set.shape}
		c.p.Add(sc)
	}
	return nil
}

// busyColor rings the runs a busy box may have slowed.
var busyColor = color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}

// bandPolygon shades the interval [lo, hi] over the whole height: a
// polygon whose y spans whatever the axis shows.
func bandPolygon(lo, hi float64, col color.Color) *vband {
	r, g, b, _ := col.RGBA()
	return &vband{lo: lo - 0.5*bandPad(lo, hi), hi: hi + 0.5*bandPad(lo, hi),
		fill: color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x30}}
}

// bandPad widens a band of whole levels ([9, 9]) to show: half a unit each
// side.
func bandPad(lo, hi float64) float64 {
	if lo == math.Trunc(lo) && hi == math.Trunc(hi) {
		return 1
	}
	return 0
}

// vband is a vertical band over the data area.
type vband struct {
	lo, hi float64
	fill   color.Color
}

func (b *vband) Plot(c draw.Canvas, p *gplot.Plot) {
	x, _ := p.Transforms(&c)
	x0, x1 := x(b.lo), x(b.hi)
	if x1-x0 < vg.Points(1.5) {
		mid := (x0 + x1) / 2
		x0, x1 = mid-vg.Points(0.75), mid+vg.Points(0.75)
	}
	c.SetColor(b.fill)
	var path vg.Path
	path.Move(vg.Point{X: x0, Y: c.Min.Y})
	path.Line(vg.Point{X: x1, Y: c.Min.Y})
	path.Line(vg.Point{X: x1, Y: c.Max.Y})
	path.Line(vg.Point{X: x0, Y: c.Max.Y})
	path.Close()
	c.Fill(path)
}

// capMark is the capacity: a dashed vertical line in its search's colour.
type capMark struct {
	x   float64
	col color.Color
}

func (m *capMark) Plot(c draw.Canvas, p *gplot.Plot) {
	x, _ := p.Transforms(&c)
	xc := x(m.x)
	c.StrokeLine2(draw.LineStyle{Color: m.col, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}},
		xc, c.Min.Y, xc, c.Max.Y)
}

// drawLimits draws each distinct limit on the metric as a dashed line.
func drawLimits(c *chart, all [][]capSearch, xlo, xhi float64, metric string) error {
	seen := map[float64]bool{}
	for _, ss := range all {
		for _, s := range ss {
			if !(s.limit > 0) || seen[s.limit] {
				continue
			}
			seen[s.limit] = true
			if err := sloLine(c, s.limit, xlo, xhi, metric+" limit (SLO) "+fmtNum(s.limit)); err != nil {
				return err
			}
		}
	}
	return nil
}

// sloLine is a dashed horizontal reference line at y over [xlo, xhi].
func sloLine(c *chart, y, xlo, xhi float64, name string) error {
	pad := (xhi - xlo) * 0.04
	l, err := plotter.NewLine(plotter.XYs{{X: xlo - pad, Y: y}, {X: xhi + pad, Y: y}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = color50, vg.Points(1), []vg.Length{vg.Points(5), vg.Points(3)}
	c.p.Add(l)
	c.add(name, l)
	return nil
}

// addMarkLegend explains the glyphs.
func addMarkLegend(c *chart) {
	for _, m := range []struct {
		name  string
		shape draw.GlyphDrawer
		col   color.Color
		r     vg.Length
	}{
		{"met the SLO", draw.CircleGlyph{}, color50, vg.Points(2.5)},
		{"broke it", draw.CrossGlyph{}, color50, vg.Points(3)},
		{"busy box", draw.RingGlyph{}, busyColor, vg.Points(5)},
	} {
		sc, _ := plotter.NewScatter(plotter.XYs{{X: 0, Y: 1}})
		sc.GlyphStyle = draw.GlyphStyle{Color: m.col, Radius: m.r, Shape: m.shape}
		c.add(m.name, sc)
	}
	c.add("capacity, interval shaded", capThumb{})
}

// capThumb is the legend's mark of a capacity: a shaded band with the
// dashed line in it.
type capThumb struct{}

func (capThumb) Thumbnail(c *draw.Canvas) {
	mid := (c.Min.X + c.Max.X) / 2
	w := (c.Max.X - c.Min.X) / 4
	c.SetColor(color.NRGBA{R: 0x44, G: 0x44, B: 0x44, A: 0x30})
	var path vg.Path
	path.Move(vg.Point{X: mid - w, Y: c.Min.Y})
	path.Line(vg.Point{X: mid + w, Y: c.Min.Y})
	path.Line(vg.Point{X: mid + w, Y: c.Max.Y})
	path.Line(vg.Point{X: mid - w, Y: c.Max.Y})
	path.Close()
	c.Fill(path)
	c.StrokeLine2(draw.LineStyle{Color: color50, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(1)}}, mid, c.Min.Y, mid, c.Max.Y)
}
