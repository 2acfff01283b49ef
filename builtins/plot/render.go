package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/benchbook/benchbook/runtime/record/svgtext"
)

// Figure size: wide enough for a legend strip beside the data, small
// enough to sit in a record column.
const (
	figWidth  = 7 * vg.Inch
	figHeight = 3.6 * vg.Inch
	maxLabel  = 28 // legend and tick labels longer than this are shortened
)

// sans is the typeface the figures are measured with. The SVG only names
// it, so the family list is widened to browser fonts with the same metrics.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

const (
	svgFamily     = "font-family:Liberation Sans;"
	browserFamily = "font-family:Liberation Sans,Arimo,Arial,Helvetica,sans-serif;"
)

// palette is colour-blind safe (Okabe-Ito), in the order arms are drawn.
var palette = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // green
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // purple
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky
	color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	color.RGBA{R: 0xF0, G: 0xE4, B: 0x42, A: 0xFF}, // yellow
	color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
}

var (
	grey      = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xFF}
	gridColor = color.RGBA{R: 0xE4, G: 0xE4, B: 0xE4, A: 0xFF}
	color50   = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xFF}
)

func colorAt(i int) color.Color { return palette[i%len(palette)] }

// chart is a plot being built plus the legend drawn outside its data area.
type chart struct {
	p      *gplot.Plot
	grid   *plotter.Grid
	legend gplot.Legend
	// below, when set, draws a strip of stripHeight under the plot whose
	// columns line up with the data through x (data x to canvas x).
	below       func(c draw.Canvas, x func(float64) vg.Length)
	stripHeight vg.Length
}

// newChart returns a chart with titles in the sans typeface.
func newChart(title, xlabel, ylabel string) *chart {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	p.Add(grid)
	l := gplot.NewLegend()
	l.TextStyle.Font = font.From(sans, 9)
	l.Top, l.Left = true, true
	l.Padding = vg.Points(4)
	return &chart{p: p, grid: grid, legend: l}
}

// add puts a legend entry; names are shortened so the strip stays narrow.
func (c *chart) add(name string, thumbs ...gplot.Thumbnailer) {
	c.legend.Add(shorten(name), thumbs...)
}

// render draws the chart into an SVG document: data on the left, the
// legend in a strip on the right so it never covers data.
func (c *chart) render() (svg []byte, err error) {
	defer func() {
		if r := recover(); r != nil { // gonum/plot panics on impossible ranges
			err = fmt.Errorf("drawing failed: %v", r)
		}
	}()
	canvas := vgsvg.New(figWidth, figHeight+c.stripHeight)
	dc := draw.Crop(draw.New(canvas), 0, 0, 0, -vg.Points(4))
	var strip draw.Canvas
	if c.below != nil {
		strip = draw.Crop(dc, 0, 0, 0, -(dc.Size().Y - c.stripHeight))
		dc = draw.Crop(dc, 0, 0, c.stripHeight, 0)
	}
	area := dc
	// The strip is measured with Liberation Sans; a browser without it
	// may use a wider sans-serif (DejaVu Sans is about 12% wider), so
	// leave room for that rather than let text cross the edge.
	legendWidth := c.legend.Rectangle(dc).Size().X * 1.15
	if legendWidth > 0 {
		area = draw.Crop(dc, 0, -(legendWidth + vg.Points(12)), 0, 0)
		side := draw.Crop(dc, dc.Size().X-legendWidth-vg.Points(6), -vg.Points(6), 0, -vg.Points(24))
		c.legend.Draw(side)
	}
	area = c.leftRoom(area)
	c.p.Draw(area)
	if c.below != nil {
		data := c.p.DataCanvas(area)
		x, _ := c.p.Transforms(&data)
		strip.Rectangle.Min.X, strip.Rectangle.Max.X = data.Min.X, data.Max.X
		c.below(strip, x)
	}
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, err
	}
	svg = bytes.ReplaceAll(buf.Bytes(), []byte(svgFamily), []byte(browserFamily))
	return withTitle(svg, c.p.Title.Text), nil
}

// leftRoom crops area on the left so that what is drawn left of the data
// fits in the figure: the y label as a browser's wider font draws it (it
// lost a pixel), and a strip's row labels (they were clipped: "her CPU
// (cores)").
func (c *chart) leftRoom(area draw.Canvas) draw.Canvas {
	area = draw.Crop(area, vg.Points(3), 0, 0, 0)
	if c.below == nil {
		return area
	}
	data := c.p.DataCanvas(area)
	if have, need := data.Min.X-area.Min.X, stripLabelWidth(); have < need {
		area = draw.Crop(area, need-have, 0, 0, 0)
	}
	return area
}

// withTitle adds a <title> to the SVG so screen readers and tooltips name
// the figure.
func withTitle(svg []byte, title string) []byte {
	start := bytes.Index(svg, []byte("<svg"))
	if start < 0 || title == "" {
		return svg
	}
	end := bytes.IndexByte(svg[start:], '>')
	if end < 0 {
		return svg
	}
	at := start + end + 1
	out := append([]byte(nil), svg[:at]...)
	out = append(out, "\n<title>"+svgtext.Escape(title)+"</title>"...)
	return append(out, svg[at:]...)
}

// figure renders the chart as a Figure value.
func (c *chart) figure() (*Figure, error) {
	svg, err := c.render()
	if err != nil {
		return nil, err
	}
	return NewFigure(c.p.Title.Text, svg), nil
}

func shorten(s string) string {
	r := []rune(s)
	if len(r) <= maxLabel {
		return s
	}
	return string(r[:maxLabel-1]) + "…"
}

// fmtNum formats a number for a tick or a label without trailing zeros.
func fmtNum(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.Contains(s, "e") {
		s = fmt.Sprintf("%.0f", v)
	}
	return s
}

// niceTicks marks about six round values (1, 2 or 5 times a power of ten)
// with short labels; gonum's default labels only a few ticks, with two
// decimals.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []gplot.Tick{{Value: lo, Label: fmtNum(lo)}}
	}
	step := niceStep((hi - lo) / 6)
	var ticks []gplot.Tick
	// Ticks are counted, not stepped to: far from zero a step below the
	// values' precision (lo = 1e17, hi = lo + 16) left v += step unchanged
	// and the loop never ended.
	first := math.Ceil(lo/step) * step
	for k := 0; k <= maxTicks; k++ {
		v := first + float64(k)*step
		if v > hi+step*1e-9 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		if n := len(ticks); n > 0 && v <= ticks[n-1].Value {
			continue // below the values' precision: the same tick again
		}
		ticks = append(ticks, gplot.Tick{Value: v, Label: fmtNum(v)})
	}
	return ticks
}

// maxTicks bounds the ticks of an axis (about six are asked for).
const maxTicks = 20

func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// headroom leaves 5% above the highest value so lines do not run along
// the frame.
func headroom(p *gplot.Plot) {
	if p.Y.Max > p.Y.Min {
		p.Y.Max += 0.05 * (p.Y.Max - p.Y.Min)
	}
}

// niceBelow is the largest 1, 2 or 5 times a power of ten at or below v (> 0).
func niceBelow(v float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*mag <= v {
			return m * mag
		}
	}
	return mag
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten (only
// the powers when the range spans more than four decades), with the same
// short labels as niceTicks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(lo > 0 && hi > lo) || math.IsInf(hi, 0) {
		return []gplot.Tick{{Value: lo, Label: fmtNum(lo)}}
	}
	steps := []float64{1, 2, 5}
	if math.Log10(hi/lo) > 4 {
		steps = []float64{1}
	}
	var ticks []gplot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range steps {
			v := m * math.Pow(10, e)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ticks = append(ticks, gplot.Tick{Value: v, Label: fmtNum(v)})
			}
		}
	}
	return ticks
}
