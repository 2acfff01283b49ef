package workload

import (
	"fmt"
	"html"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/metricname"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Histogram is a latency distribution (microseconds inside, milliseconds
// to Starlark): h.p(q), h.mean, h.max, h.count.
type Histogram struct {
	h *hdrhistogram.Histogram
}

var (
	_ starlark.HasAttrs   = (*Histogram)(nil)
	_ starlark.Comparable = (*Histogram)(nil)
	_ codec.Marshaler     = (*Histogram)(nil)
)

func decodeHistogram(data []byte, _ codec.Types) (starlark.Value, error) {
	h, err := hdrhistogram.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	return &Histogram{h: h}, nil
}

// Hdr returns the distribution, values in microseconds.
func (h *Histogram) Hdr() *hdrhistogram.Histogram { return h.h }

func (h *Histogram) String() string {
	return fmt.Sprintf("histogram(count=%d, p50=%.3fms, p99=%.3fms, max=%.3fms)",
		h.h.TotalCount(), quantileMs(h.h, 50), quantileMs(h.h, 99), usToMs(h.h.Max()))
}
func (h *Histogram) Type() string          { return "histogram" }
func (h *Histogram) Freeze()               {}
func (h *Histogram) Truth() starlark.Bool  { return h.h.TotalCount() > 0 }
func (h *Histogram) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: histogram") }

// CompareSameType: two histograms are equal when they count the same
// values in the same buckets (the same distribution, decoded or not).
func (h *Histogram) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualOnly(op, h.h.Equals(y.(*Histogram).h), h, y)
}

// MarshalValue stores the histogram in the compact HDR V2 encoding.
func (h *Histogram) MarshalValue() ([]byte, error) {
	return h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
}

func (h *Histogram) AttrNames() []string { return []string{"count", "max", "mean", "p"} }

func (h *Histogram) Attr(name string) (starlark.Value, error) {
	switch name {
	case "count":
		return starlark.MakeInt64(h.h.TotalCount()), nil
	case "max":
		return starlark.Float(usToMs(h.h.Max())), nil
	case "mean":
		return starlark.Float(h.h.Mean() / 1000), nil
	case "p":
		return percentileMethod("histogram.p", h.h), nil
	}
	return nil, nil
}

// percentileMethod returns the bound method p(q) -> ms.
func percentileMethod(name string, h *hdrhistogram.Histogram) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var qv starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &qv); err != nil {
			return nil, err
		}
		q, ok := starlark.AsFloat(qv)
		if !ok || q < 0 || q > 100 {
			return nil, fmt.Errorf("%s: q must be a number in 0..100, got %s", b.Name(), qv)
		}
		return starlark.Float(quantileMs(h, q)), nil
	})
}

// HTML shows the histogram's main percentiles as a small table.
func (h *Histogram) HTML() string {
	var b strings.Builder
	b.WriteString(`<table class="histogram"><tr>`)
	for _, q := range summaryQuantiles {
		fmt.Fprintf(&b, "<th>p%s</th>", html.EscapeString(fmtQ(q)))
	}
	b.WriteString("<th>max</th><th>count</th></tr><tr>")
	for _, q := range summaryQuantiles {
		fmt.Fprintf(&b, "<td>%s</td>", fmtMs(quantileMs(h.h, q)))
	}
	fmt.Fprintf(&b, "<td>%s</td><td>%d</td></tr></table>", fmtMs(usToMs(h.h.Max())), h.h.TotalCount())
	return b.String()
}

// Markdown is the same table in GitHub Markdown.
func (h *Histogram) Markdown() string {
	var head, sep, row strings.Builder
	for _, q := range summaryQuantiles {
		fmt.Fprintf(&head, "| p%s ", fmtQ(q))
		sep.WriteString("| ---: ")
		fmt.Fprintf(&row, "| %s ", fmtMs(quantileMs(h.h, q)))
	}
	return fmt.Sprintf("%s| max | count |\n%s| ---: | ---: |\n%s| %s | %d |\n",
		head.String(), sep.String(), row.String(), fmtMs(usToMs(h.h.Max())), h.h.TotalCount())
}

// JSON gives percentiles in milliseconds.
func (h *Histogram) JSON() any {
	out := map[string]any{"count": h.h.TotalCount(), "mean_ms": h.h.Mean() / 1000, "max_ms": usToMs(h.h.Max())}
	for _, q := range summaryQuantiles {
		out[metricname.QuantileKey(q)+"_ms"] = quantileMs(h.h, q)
	}
	return out
}

var summaryQuantiles = metricname.SummaryQuantiles

func fmtQ(q float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", q), ".0") }

// Short names for loadgen's histogram helpers, which every display here uses.
const histMin = loadgen.HistMin

func newHist() *hdrhistogram.Histogram                        { return loadgen.NewHist() }
func quantileMs(h *hdrhistogram.Histogram, q float64) float64 { return loadgen.QuantileMs(h, q) }
func usToMs(us int64) float64                                 { return loadgen.UsToMs(us) }
func fmtMs(ms float64) string                                 { return loadgen.FormatMs(ms) }
func sumErrors(m map[string]int64) int64                      { return loadgen.SumErrors(m) }
