package plot

import (
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// hist draws latency histograms as outlines, one per run:
// plot.hist(runs, labels = None, title = None, bins = 40).
func hist(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var runs, labels starlark.Value = nil, starlark.None
	var title string
	bins := 40
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"runs", &runs, "labels?", &labels, "title?", &title, "bins?", &bins); err != nil {
		return nil, err
	}
	if bins < 2 || bins > 200 {
		return nil, fmt.Errorf("%s: bins must be in 2..200, got %d", b.Name(), bins)
	}
	rs, labels := runItems(runs, labels)
	names, err := labelsFor(rs, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	hs := make([]*hdrhistogram.Histogram, len(rs))
	for i, r := range rs {
		h, ok := r.(hdrer)
		if !ok {
			return nil, fmt.Errorf("%s: runs: item %d is a %s, want a run or a histogram", b.Name(), i, r.Type())
		}
		hs[i] = h.Hdr()
	}
	if title == "" {
		title = "Latency histogram"
	}
	fig, err := drawHist(hs, names, title, bins)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return fig, nil
}

// histRange is the common x range: 0 to the largest p99.9, so that a few
// outliers do not squeeze the body of the distribution into one bin.
func histRange(hs []*hdrhistogram.Histogram) (hi float64, clipped bool) {
	for _, h := range hs {
		hi = math.Max(hi, float64(h.ValueAtQuantile(99.9))/1000)
		clipped = clipped || h.ValueAtQuantile(99.9) < h.Max()
	}
	return hi, clipped
}

// binCounts returns the share of samples (%) in each of n equal bins of
// [0, hi] ms.
func binCounts(h *hdrhistogram.Histogram, hi float64, n int) []float64 {
	out := make([]float64, n)
	total := float64(h.TotalCount())
	if total == 0 || hi <= 0 {
		return out
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		mid := float64(bar.From+bar.To) / 2 / 1000
		if i := int(mid / hi * float64(n)); i < n {
			out[i] += 100 * float64(bar.Count) / total
		}
	}
	return out
}

// stepLine turns bin heights into a histogram outline.
func stepLine(counts []float64, hi float64) plotter.XYs {
	w := hi / float64(len(counts))
	xys := plotter.XYs{{X: 0, Y: 0}}
	for i, c := range counts {
		xys = append(xys, plotter.XY{X: float64(i) * w, Y: c}, plotter.XY{X: float64(i+1) * w, Y: c})
	}
	return append(xys, plotter.XY{X: hi, Y: 0})
}

func drawHist(hs []*hdrhistogram.Histogram, names []string, title string, bins int) (*Figure, error) {
	hi, clipped := histRange(hs)
	if hi <= 0 {
		return nil, fmt.Errorf("runs: no latency recorded")
	}
	xlabel := "latency (ms)"
	if clipped {
		xlabel += ", up to p99.9"
	}
	c := newChart(title, xlabel, "share of requests (%)")
	for i, h := range hs {
		l, err := plotter.NewLine(stepLine(binCounts(h, hi, bins), hi))
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = colorAt(i), vg.Points(1.2)
		c.p.Add(l)
		c.add(names[i], l)
	}
	c.p.X.Min, c.p.Y.Min = 0, 0
	headroom(c.p)
	return c.figure()
}
