package browsertest

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The charts' bars, read from the SVG text as a browser draws it: filled
// axis-aligned rectangles inside the data area (the first white rectangle
// is the figure's background; legend swatches lie to its right).

var (
	svgDoc    = regexp.MustCompile(`(?s)<svg\b.*?</svg>`)
	svgWidth  = regexp.MustCompile(`<svg[^>]*\bwidth="([0-9.]+)pt"`)
	svgRect   = regexp.MustCompile(`<path d="M([-0-9.]+),([-0-9.]+)L([-0-9.]+),([-0-9.]+)L([-0-9.]+),([-0-9.]+)L([-0-9.]+),([-0-9.]+)Z" style="fill:(#[0-9A-Fa-f]{6})"`)
	whiteFill = "#FFFFFF"
)

// ThinBars returns, for every chart of page, the bars drawn less than minPx
// high at the size the browser showed the chart (widths from Check's
// probe, in page order); empty when every bar is readable.
func ThinBars(page string, rendered [][2]float64, minPx float64) []string {
	var thin []string
	for i, doc := range svgDoc.FindAllString(page, -1) {
		m := svgWidth.FindStringSubmatch(doc)
		if m == nil || i >= len(rendered) {
			continue
		}
		pt, _ := strconv.ParseFloat(m[1], 64)
		pxPerPt := rendered[i][0] / pt
		for _, b := range bars(doc) {
			if h := b.h * pxPerPt; h < minPx {
				thin = append(thin, fmt.Sprintf("chart %d (%s): a %s bar %.2f px high", i+1, title(doc), b.fill, h))
			}
		}
	}
	return thin
}

// BarCount is the number of bars in the page's charts.
func BarCount(page string) int {
	n := 0
	for _, doc := range svgDoc.FindAllString(page, -1) {
		n += len(bars(doc))
	}
	return n
}

type bar struct {
	fill string
	h    float64
}

func bars(doc string) []bar {
	type rect struct {
		fill                   string
		minX, maxX, minY, maxY float64
	}
	var rects []rect
	areaMaxX := math.Inf(1)
	for _, m := range svgRect.FindAllStringSubmatch(doc, -1) {
		var xs, ys []float64
		for k := 1; k <= 8; k += 2 {
			x, _ := strconv.ParseFloat(m[k], 64)
			y, _ := strconv.ParseFloat(m[k+1], 64)
			xs, ys = append(xs, x), append(ys, y)
		}
		if xs[0] != xs[1] || ys[1] != ys[2] || xs[2] != xs[3] || ys[3] != ys[0] {
			continue // not an axis-aligned rectangle
		}
		r := rect{fill: strings.ToUpper(m[9]), minX: math.Min(xs[0], xs[2]), maxX: math.Max(xs[0], xs[2]),
			minY: math.Min(ys[0], ys[1]), maxY: math.Max(ys[0], ys[1])}
		if r.fill == whiteFill && math.IsInf(areaMaxX, 1) {
			areaMaxX = r.maxX
		}
		rects = append(rects, r)
	}
	var out []bar
	for _, r := range rects {
		if r.fill != whiteFill && r.maxX <= areaMaxX && r.maxX-r.minX > 1 {
			out = append(out, bar{fill: r.fill, h: r.maxY - r.minY})
		}
	}
	return out
}

func title(doc string) string {
	m := regexp.MustCompile(`<title>(.*?)</title>`).FindStringSubmatch(doc)
	if m == nil {
		return "untitled"
	}
	return m[1]
}
