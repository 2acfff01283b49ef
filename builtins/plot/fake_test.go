package plot

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// fakeRun has the shape of workload's run: label, rps, count, mean, max,
// p(q) in ms, windows, and Hdr() in microseconds, with latencies drawn
// from a seeded log-normal distribution.
type fakeRun struct {
	label   string
	h       *hdrhistogram.Histogram
	rps     float64
	windows []starlark.Value
}

// fakeOptions shape a fake run.
type fakeOptions struct {
	seed      uint64
	label     string
	n         int     // samples
	medianUs  float64 // median latency
	sigma     float64 // log-normal shape
	windows   int
	zeroShare float64 // share of samples recorded as 0 µs
}

func newFakeRun(o fakeOptions) *fakeRun {
	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	per := max(1, o.n/max(1, o.windows))
	r := &fakeRun{label: o.label, h: h, rps: float64(o.n) / float64(max(1, o.windows))}
	w := hdrhistogram.New(1, 3_600_000_000, 2)
	for i := range o.n {
		v := int64(o.medianUs * math.Exp(o.sigma*rng.NormFloat64()))
		if rng.Float64() < o.zeroShare {
			v = 0
		}
		_ = h.RecordValue(v)
		_ = w.RecordValue(v)
		if (i+1)%per == 0 && len(r.windows) < o.windows {
			r.windows = append(r.windows, fakeWindow(len(r.windows), w, rng))
			w.Reset()
		}
	}
	return r
}

func fakeWindow(i int, w *hdrhistogram.Histogram, rng *rand.Rand) starlark.Value {
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"start":  starlark.Float(float64(i)),
		"count":  starlark.MakeInt64(w.TotalCount()),
		"rps":    starlark.Float(float64(w.TotalCount()) * (0.95 + 0.1*rng.Float64())),
		"p50":    starlark.Float(float64(w.ValueAtQuantile(50)) / 1000),
		"p99":    starlark.Float(float64(w.ValueAtQuantile(99)) / 1000),
		"errors": starlark.MakeInt(rng.IntN(3)),
	})
}

func (r *fakeRun) Hdr() *hdrhistogram.Histogram { return r.h }
func (r *fakeRun) String() string               { return "run(" + r.label + ")" }
func (r *fakeRun) Type() string                 { return "run" }
func (r *fakeRun) Freeze()                      {}
func (r *fakeRun) Truth() starlark.Bool         { return true }
func (r *fakeRun) Hash() (uint32, error)        { return 0, fmt.Errorf("unhashable: run") }
func (r *fakeRun) AttrNames() []string {
	return []string{"count", "label", "max", "mean", "p", "rps", "windows"}
}

func (r *fakeRun) Attr(name string) (starlark.Value, error) {
	switch name {
	case "label":
		return starlark.String(r.label), nil
	case "rps":
		return starlark.Float(r.rps), nil
	case "count":
		return starlark.MakeInt64(r.h.TotalCount()), nil
	case "mean":
		return starlark.Float(r.h.Mean() / 1000), nil
	case "max":
		return starlark.Float(float64(r.h.Max()) / 1000), nil
	case "windows":
		return starlark.NewList(append([]starlark.Value(nil), r.windows...)), nil
	case "p":
		return starlark.NewBuiltin("run.p", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var q float64
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &q); err != nil {
				return nil, err
			}
			return starlark.Float(float64(r.h.ValueAtQuantile(q)) / 1000), nil
		}), nil
	}
	return nil, nil
}

// fakeComparison has the shape of metric's comparison.
func fakeComparison(metric, better string, index float64, verdict string) starlark.Value {
	return starlarkstruct.FromStringDict(starlark.String("comparison"), starlark.StringDict{
		"metric": starlark.String(metric), "better": starlark.String(better),
		"a_label": starlark.String("A"), "b_label": starlark.String("B"),
		"index": starlark.Float(index), "verdict": starlark.String(verdict),
		"mean_a": starlark.Float(1000), "mean_b": starlark.Float(10 * index),
	})
}

// fakeExperiment has the shape of abab's result: arms and runs per arm.
func fakeExperiment(pairs int) starlark.Value {
	runs := starlark.NewDict(2)
	for a, name := range []string{"A", "B"} {
		var rs []starlark.Value
		for p := range pairs {
			rs = append(rs, newFakeRun(fakeOptions{
				seed: uint64(100*a + p), label: fmt.Sprintf("%s%d", name, p+1),
				n: 2000, medianUs: 900 - 150*float64(a), sigma: 0.4, windows: 4,
			}))
		}
		_ = runs.SetKey(starlark.String(name), starlark.NewList(rs))
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"arms":  starlark.NewList([]starlark.Value{starlark.String("A"), starlark.String("B")}),
		"runs":  runs,
		"pairs": starlark.MakeInt(pairs),
	})
}

// sweepRows is a list of dicts as a sweep produces them.
func sweepRows() starlark.Value {
	var rows []starlark.Value
	for _, pool := range []int{4, 16} {
		for _, clients := range []int{1, 2, 4, 8, 16, 32} {
			d := starlark.NewDict(3)
			_ = d.SetKey(starlark.String("pool"), starlark.MakeInt(pool))
			_ = d.SetKey(starlark.String("clients"), starlark.MakeInt(clients))
			rps := 1000 * float64(clients) / (1 + float64(clients)/float64(pool))
			_ = d.SetKey(starlark.String("rps"), starlark.Float(rps))
			_ = d.SetKey(starlark.String("p99"), starlark.Float(1+4*float64(clients)/float64(pool)))
			rows = append(rows, d)
		}
	}
	return starlark.NewList(rows)
}

// threeArms is an experiment with a control arm and two candidates over
// eight pairs.
func threeArms() starlark.Value {
	runs := starlark.NewDict(3)
	var names []starlark.Value
	for a, name := range []string{"A", "B", "C"} {
		var rs []starlark.Value
		for p := range 8 {
			rs = append(rs, newFakeRun(fakeOptions{
				seed: uint64(1000*a + p), n: 400, medianUs: 900 - 100*float64(a), sigma: 0.3, windows: 2,
			}))
		}
		_ = runs.SetKey(starlark.String(name), starlark.NewList(rs))
		names = append(names, starlark.String(name))
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"arms": starlark.NewList(names), "runs": runs, "pairs": starlark.MakeInt(8),
	})
}
