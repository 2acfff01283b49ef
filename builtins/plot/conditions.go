package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// condition is what the box was doing during one run of an experiment, as
// abab records it: load average before and after, CPU that other
// processes used (in cores), the gate's busy flag, and whether the load
// generator said it may have been the bottleneck.
type condition struct {
	x            float64 // the run's x in the pairs chart
	loadBefore   float64
	loadAfter    float64
	foreign      float64
	busy         bool
	genSaturated bool
}

// foreignAlarm is the other processes' CPU, in cores, at which a run's
// cell turns fully red: half a core taken from a 2-core box distorts it.
const foreignAlarm = 0.5

// conditionsOf reads exp.order [(pair, arm)] and exp.gates (same order);
// runs of arms not drawn (the A-A controls) are left out. nil when the
// experiment recorded no conditions.
func conditionsOf(exp starlark.Value, arms []arm, runs starlark.Mapping, x func(pair, arm int) float64) []condition {
	order, gates := starval.Items(starval.Attr(exp, "order")), starval.Items(starval.Attr(exp, "gates"))
	if starval.Attr(exp, "gates") == nil || len(order) != len(gates) {
		return nil
	}
	armIndex := map[string]int{}
	for i, a := range arms {
		armIndex[a.name] = i
	}
	var out []condition
	for i, o := range order {
		pa := starval.Items(o)
		if len(pa) != 2 {
			return nil
		}
		pair, ok := starval.Number(pa[0])
		ai, known := armIndex[stringOf(pa[1])]
		if !ok || !known {
			continue
		}
		c := gateCondition(gates[i])
		c.x = x(int(pair), ai)
		c.genSaturated = generatorBound(runs, stringOf(pa[1]), int(pair))
		out = append(out, c)
	}
	return out
}

func gateCondition(g starlark.Value) condition {
	var c condition
	c.loadBefore, _ = starval.Number(starval.Attr(g, "load1_before"))
	c.loadAfter, _ = starval.Number(starval.Attr(g, "load1_after"))
	c.foreign, _ = starval.Number(starval.Attr(g, "foreign_cpu"))
	b, _ := starval.Attr(g, "busy").(starlark.Bool)
	c.busy = bool(b)
	return c
}

// generatorBound says whether the run's warnings name the generator as a
// possible bottleneck.
func generatorBound(runs starlark.Mapping, arm string, pair int) bool {
	rs, found, _ := runs.Get(starlark.String(arm))
	if !found {
		return false
	}
	list := starval.Items(rs)
	if pair < 0 || pair >= len(list) {
		return false
	}
	for _, w := range starval.Items(starval.Attr(list[pair], "warnings")) {
		if s, ok := starlark.AsString(w); ok && strings.Contains(s, "bottleneck") {
			return true
		}
	}
	return false
}

// stripRows are the strip's row labels, top to bottom.
var stripRows = []string{"other CPU (cores)", "load 1m", "flags"}

// stripFont is the strip's text: small, grey, centred under each run.
func stripFont() text.Style {
	return text.Style{Font: font.From(sans, 7), Color: color50, XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: gplot.DefaultTextHandler}
}

// browserSlack widens a width measured with Liberation Sans for a browser
// that draws the SVG with a wider sans-serif (DejaVu Sans is about 12 %
// wider; the figures name no font file).
const browserSlack = 1.15

// stripLabelWidth is the room the row labels need left of the data.
func stripLabelWidth() vg.Length {
	var w vg.Length
	for _, r := range stripRows {
		w = max(w, stripFont().Width(r))
	}
	return w*browserSlack + vg.Points(6)
}

// conditionsStrip draws, under each run's dot, a cell shaded by the other
// processes' CPU with the load average and the flags as text: a reviewer
// sees at a glance which runs were measured on a disturbed box. Each row's
// figures take the most precise form that fits between neighbouring runs
// (13.2→13.0, else 13→13, else none): on a busy box they ran together.
func conditionsStrip(conds []condition, npairs int) func(draw.Canvas, func(float64) vg.Length) {
	return func(c draw.Canvas, x func(float64) vg.Length) {
		small := stripFont()
		label := small
		label.XAlign = draw.XRight
		rowH := (c.Max.Y - c.Min.Y - vg.Points(4)) / 3
		top := c.Max.Y - vg.Points(4)
		for i, r := range stripRows {
			c.FillText(label, vg.Point{X: c.Min.X - vg.Points(4), Y: top - rowH*(vg.Length(i)+0.5)}, r)
		}
		width := (c.Max.X - c.Min.X) / vg.Length(max(1, npairs)) * 0.3
		room := runSpacing(conds, x) - vg.Points(1.5)
		cpu := fitting(small, room, conds, func(k condition) string { return fmt.Sprintf("%.2f", k.foreign) },
			func(k condition) string { return fmt.Sprintf("%.1f", k.foreign) })
		load := fitting(small, room, conds, func(k condition) string { return fmt.Sprintf("%.1f→%.1f", k.loadBefore, k.loadAfter) },
			func(k condition) string { return fmt.Sprintf("%.0f→%.0f", k.loadBefore, k.loadAfter) },
			func(k condition) string { return fmt.Sprintf("%.0f", max(k.loadBefore, k.loadAfter)) })
		for _, k := range conds {
			cx := x(k.x)
			cell := vg.Rectangle{Min: vg.Point{X: cx - width/2, Y: top - rowH}, Max: vg.Point{X: cx + width/2, Y: top}}
			c.FillPolygon(heat(k.foreign/foreignAlarm), []vg.Point{cell.Min, {X: cell.Min.X, Y: cell.Max.Y}, cell.Max, {X: cell.Max.X, Y: cell.Min.Y}})
			if cpu != nil {
				c.FillText(small, vg.Point{X: cx, Y: top - rowH/2}, cpu(k))
			}
			if load != nil {
				c.FillText(small, vg.Point{X: cx, Y: top - rowH*1.5}, load(k))
			}
			flags := k.flags()
			if flags != "" {
				warn := small
				warn.Color = palette[5]
				c.FillText(warn, vg.Point{X: cx, Y: top - rowH*2.5}, flags)
			}
		}
	}
}

// runSpacing is the least distance between two runs' centres (the strip's
// whole width for one run).
func runSpacing(conds []condition, x func(float64) vg.Length) vg.Length {
	xs := make([]float64, len(conds))
	for i, k := range conds {
		xs[i] = float64(x(k.x))
	}
	slices.Sort(xs)
	least := math.Inf(1)
	for i := 1; i < len(xs); i++ {
		least = min(least, xs[i]-xs[i-1])
	}
	if math.IsInf(least, 1) {
		least = 200
	}
	return vg.Length(least)
}

// fitting returns the first of the forms whose text, for every run, fits
// in room (as a browser may draw it); nil when none does.
func fitting(st text.Style, room vg.Length, conds []condition, forms ...func(condition) string) func(condition) string {
	for _, f := range forms {
		fits := true
		for _, k := range conds {
			if st.Width(f(k))*browserSlack > room {
				fits = false
				break
			}
		}
		if fits {
			return f
		}
	}
	return nil
}

// flags are the run's warnings in a word each ("busy", "gen" for a
// generator that may have been the bottleneck).
func (k condition) flags() string {
	var f []string
	if k.busy {
		f = append(f, "busy")
	}
	if k.genSaturated {
		f = append(f, "gen")
	}
	return strings.Join(f, " ")
}

// heat shades from a pale grey (nothing else ran) to a light red (t >= 1).
func heat(t float64) color.Color {
	t = min(1, max(0, t))
	lerp := func(a, b uint8) uint8 { return uint8(float64(a) + t*(float64(b)-float64(a))) }
	return color.RGBA{R: lerp(0xF2, 0xF4), G: lerp(0xF2, 0x9A), B: lerp(0xF2, 0x8C), A: 0xFF}
}
