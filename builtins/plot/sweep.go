package plot

import (
	"fmt"
	"math"
	"sort"

	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// sweep draws one line per value of `by` over a swept parameter:
// plot.sweep(table, x, y, by = None, title = None, log_x = False, log_y = False, slo = None).
func sweep(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var o sweepOptions
	var table starlark.Value
	var slo starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "table", &table, "x", &o.x, "y", &o.y,
		"by?", &o.by, "title?", &o.title, "log_x?", &o.logX, "log_y?", &o.logY, "slo?", &slo); err != nil {
		return nil, err
	}
	o.slo = math.NaN()
	if slo != starlark.None {
		f, ok := starval.Number(slo)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) || (o.logY && f <= 0) {
			return nil, fmt.Errorf("%s: slo must be a finite number (positive on a log y axis), got %s", b.Name(), slo)
		}
		o.slo = f
	}
	groups, err := sweepGroups(table, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	fig, err := drawSweep(groups, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

type sweepOptions struct {
	x, y, by string // column names; by "" draws one line
	title    string
	logX     bool
	logY     bool    // y on a log axis (values must be positive)
	slo      float64 // a limit on y drawn as a dashed line; NaN for none
}

// sweepGroup is one line: the rows sharing a value of `by`.
type sweepGroup struct {
	name string
	xys  plotter.XYs
}

// sweepGroups reads the three columns, row by row, keeping groups in the
// order they first appear and sorting each line by x.
func sweepGroups(table starlark.Value, o sweepOptions) ([]sweepGroup, error) {
	rows, err := rowsOf(table)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	index := map[string]int{}
	var groups []sweepGroup
	for i, row := range rows {
		x, y, err := sweepPoint(row, o)
		if err != nil {
			return nil, fmt.Errorf("table: row %d: %w", i, err)
		}
		name := ""
		if o.by != "" {
			v, ok := field(row, o.by)
			if !ok {
				return nil, fmt.Errorf("by: row %d has no column %q", i, o.by)
			}
			name = o.by + " = " + stringOf(v)
		}
		if _, seen := index[name]; !seen {
			index[name] = len(groups)
			groups = append(groups, sweepGroup{name: name})
		}
		g := &groups[index[name]]
		g.xys = append(g.xys, plotter.XY{X: x, Y: y})
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("table: no rows")
	}
	for _, g := range groups {
		sort.SliceStable(g.xys, func(i, j int) bool { return g.xys[i].X < g.xys[j].X })
	}
	return groups, nil
}

func sweepPoint(row starlark.Value, o sweepOptions) (x, y float64, err error) {
	for _, c := range []struct {
		arg, name string
		dst       *float64
	}{{"x", o.x, &x}, {"y", o.y, &y}} {
		v, ok := field(row, c.name)
		if !ok {
			return 0, 0, fmt.Errorf("%s: no column %q", c.arg, c.name)
		}
		if *c.dst, ok = starval.Number(v); !ok {
			return 0, 0, fmt.Errorf("%s: column %q holds %s, want a number", c.arg, c.name, v.Type())
		}
		if math.IsNaN(*c.dst) || math.IsInf(*c.dst, 0) {
			return 0, 0, fmt.Errorf("%s: column %q holds %v", c.arg, c.name, *c.dst)
		}
		if c.arg == "x" && o.logX && x <= 0 {
			return 0, 0, fmt.Errorf("x: log_x needs positive values, got %v", x)
		}
		if c.arg == "y" && o.logY && y <= 0 {
			return 0, 0, fmt.Errorf("y: log_y needs positive values, got %v", y)
		}
	}
	return x, y, nil
}

func drawSweep(groups []sweepGroup, o sweepOptions) (*Figure, error) {
	title := o.title
	if title == "" {
		title = o.y + " by " + o.x
		if o.by != "" {
			title += ", per " + o.by
		}
	}
	c := newChart(title, o.x, unitOf(o.y))
	for i, g := range groups {
		l, s, err := plotter.NewLinePoints(g.xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = colorAt(i), vg.Points(1.5)
		s.GlyphStyle = draw.GlyphStyle{Color: colorAt(i), Radius: vg.Points(2.5), Shape: armShape(i)}
		c.p.Add(l, s)
		if g.name != "" {
			c.add(g.name, l, s)
		}
	}
	if o.logX {
		c.p.X.Scale = gplot.LogScale{}
		c.p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
	}
	if !math.IsNaN(o.slo) {
		lo, hi := c.p.X.Min, c.p.X.Max
		if err := sloLine(c, o.slo, lo, hi, o.y+" limit (SLO) "+fmtNum(o.slo)); err != nil {
			return nil, err
		}
		c.p.X.Min, c.p.X.Max = lo, hi // the line's ends do not widen the axis
	}
	if o.logY {
		c.p.Y.Scale, c.p.Y.Tick.Marker = gplot.LogScale{}, logTicks{}
		c.p.Y.Label.Text += ", log scale"
		c.p.Y.Min, c.p.Y.Max = c.p.Y.Min/1.25, c.p.Y.Max*1.25
		return c.figure()
	}
	if c.p.Y.Min > 0 {
		c.p.Y.Min = 0
	}
	headroom(c.p)
	return c.figure()
}
