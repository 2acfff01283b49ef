package workload

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/stats"
)

// Warm-up and steady state (issue 32): a target restored from a snapshot
// starts cold (one run climbed 2,309 -> 4,137 -> 5,165 req/s window by
// window past its 1 s warm-up, and nothing said so). A run whose measured
// windows trend gets a warning naming the metric and the figures
// (trendWarnings); warmup = "auto" warms the target up in probe windows
// until they are stable (autoWarmup), up to autoWarmupMax, and the run
// records how long it took (warmup_s).

// warmupArg is the warmup argument of the load builtins: a duration, or
// "auto".
type warmupArg struct {
	d    time.Duration
	auto bool
}

func (w *warmupArg) Unpack(v starlark.Value) error {
	if s, ok := v.(starlark.String); ok && s == "auto" {
		w.auto, w.d = true, 0
		return nil
	}
	var d starval.Duration
	// Every other value is a duration, refused in the words every builtin
	// uses for one (starval's TestEveryBuiltinReadsDurationsAlike).
	if err := d.Unpack(v); err != nil {
		return err
	}
	w.d, w.auto = time.Duration(d), false
	return nil
}

// Auto warm-up: probe windows of the run's window length (at least
// autoProbeMin), until the last autoStableProbes of them lie within
// autoStableSpread of their median, for at most autoWarmupMax.
const (
	autoProbeMin     = 250 * time.Millisecond
	autoStableProbes = 3
	autoStableSpread = 0.05
)

// autoWarmupMax bounds an auto warm-up: no probe starts after it. A
// variable only so that a test of a target that never settles need not
// wait a minute.
var autoWarmupMax = 60 * time.Second

// warmed is what an auto warm-up did.
type warmed struct {
	took    time.Duration // the probes'
	series  []float64     // the probes' figure: req/s (closed loop) or p50 ms (open loop)
	metric  string
	settled bool
	// lead is the measured run's own warm-up after the probes: one probe
	// window. A run that starts after a pause starts slow (a SQL run's
	// first window 15-40 % below the rest on a busy box while a run
	// continuing from its warm-up shows no dip), and that start, not the
	// target, would be measured and trend.
	lead time.Duration
}

// resettable is a target that keeps figures across runs (a SQL target's
// per-statement histograms, a Mongo target's documents): the probes' must
// not count in the measured run.
type resettable interface{ ResetFigures() }

// autoWarmup loads tgt in probe runs of one window each until their figure
// is stable or autoWarmupMax has passed, or ctx ends.
func autoWarmup(ctx context.Context, spec loadgen.Spec, tgt loadgen.Target) warmed {
	p := spec
	p.Warmup, p.Observers = 0, nil
	p.Duration = probeLength(spec)
	p.Label = spec.Label + " (warm-up)"
	w := warmed{metric: "rps"}
	if spec.Clients == 0 {
		w.metric = "p50 ms" // an open loop's rate is the schedule's
	}
	start := time.Now()
	for time.Since(start) < autoWarmupMax && ctx.Err() == nil {
		res := loadgen.Run(ctx, p, tgt)
		if res.Interrupted {
			break
		}
		w.series = append(w.series, probeFigure(res, spec.Clients > 0))
		if stable(w.series) {
			w.settled = true
			break
		}
	}
	w.took = time.Since(start)
	if r, ok := tgt.(resettable); ok {
		r.ResetFigures()
	}
	return w
}

func probeFigure(res *loadgen.Result, closed bool) float64 {
	if closed {
		if s := res.Measured.Seconds(); s > 0 {
			return float64(res.Count) / s
		}
		return 0
	}
	return loadgen.QuantileMs(res.Hist, 50)
}

// stable reports whether the last autoStableProbes figures lie within
// autoStableSpread of their median.
func stable(series []float64) bool {
	if len(series) < autoStableProbes {
		return false
	}
	last := series[len(series)-autoStableProbes:]
	m := stats.Median(last)
	if m <= 0 {
		return false
	}
	for _, x := range last {
		if math.Abs(x/m-1) > autoStableSpread {
			return false
		}
	}
	return true
}

// warning is the run's warning when the warm-up did not settle, "" when it
// did.
func (w warmed) warning() string {
	if w.settled {
		return ""
	}
	return fmt.Sprintf(`warm-up: warmup = "auto" did not settle in %s (%s of its windows: %s): the run measures a target still warming up`,
		fmtSpan(w.took), w.metric, joinFigures(lastN(w.series, 5)))
}

// trendWarnings are a run's warnings for measured windows that trend: the
// median of the last third differs from the median of the first third by
// more than trendMin (trendMinShort when there are fewer than 6 windows,
// where a third is one window and the windows must rise or fall all the
// way), and every window of one third lies beyond every window of the
// other. Throughput is judged in a closed loop only (an open loop's rate is
// the schedule's); the windows' p50 in both. The last window of a run may
// be shorter, and counts as it is.
func trendWarnings(ws []windowStat, openLoop bool) []string {
	var out []string
	if !openLoop {
		if w := trendWarning("rps", "req/s", ws, func(w windowStat) float64 { return w.RPS }); w != "" {
			out = append(out, w)
		}
	}
	if w := trendWarning("p50", "ms", ws, func(w windowStat) float64 { return w.P50 }); w != "" {
		out = append(out, w)
	}
	return out
}

const (
	trendMin      = 0.10
	trendMinShort = 0.20
)

func trendWarning(metric, unit string, ws []windowStat, f func(windowStat) float64) string {
	xs := make([]float64, len(ws))
	for i, w := range ws {
		xs[i] = f(w)
	}
	n := len(xs)
	if n < 3 || slices.Min(xs) <= 0 {
		return ""
	}
	k := max(1, n/3)
	first, last := xs[:k], xs[n-k:]
	a, b := stats.Median(first), stats.Median(last)
	change := b/a - 1
	limit := trendMin
	if n < 6 {
		limit = trendMinShort
		if !monotone(xs) {
			return ""
		}
	}
	apart := slices.Max(first) < slices.Min(last) || slices.Min(first) > slices.Max(last)
	if math.Abs(change) <= limit || !apart {
		return ""
	}
	verb := "rose"
	if change < 0 {
		verb = "fell"
	}
	return fmt.Sprintf(`not steady: %s %s from %s to %s %s (%+.0f %%) between the first and the last third of the measured windows (%s): the target had not settled, so a longer warmup (or warmup = "auto") would measure it warm`,
		metric, verb, fmtFigure(a), fmtFigure(b), unit, 100*change, joinFigures(xs))
}

func monotone(xs []float64) bool {
	up, down := true, true
	for i := 1; i < len(xs); i++ {
		up = up && xs[i] > xs[i-1]
		down = down && xs[i] < xs[i-1]
	}
	return up || down
}

func lastN(xs []float64, n int) []float64 { return xs[max(0, len(xs)-n):] }

func joinFigures(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmtFigure(x)
	}
	if len(parts) > 12 {
		parts = append(append(parts[:5:5], "…"), parts[len(parts)-5:]...)
	}
	return strings.Join(parts, ", ")
}

// fmtFigure rounds a window's figure as the run's table does: whole units
// from 100 up, three significant digits below.
func fmtFigure(x float64) string {
	if math.Abs(x) >= 100 {
		return groupThousands(int64(math.Round(x)))
	}
	return fmt.Sprintf("%.3g", x)
}

func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func fmtSpan(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// measure runs spec on tgt, after an auto warm-up when warmup = "auto".
func (a *loadArgs) measure(ctx context.Context, spec loadgen.Spec, tgt loadgen.Target) (*loadgen.Result, *warmed) {
	if !a.warmup.auto {
		return loadgen.Run(ctx, spec, tgt), nil
	}
	w := autoWarmup(ctx, spec, tgt)
	w.lead = probeLength(spec)
	spec.Warmup = w.lead
	return loadgen.Run(ctx, spec, tgt), &w
}

// probeLength is an auto warm-up's probe window: the run's window, at
// least autoProbeMin.
func probeLength(spec loadgen.Spec) time.Duration { return max(spec.Window, autoProbeMin) }

// noteWarmup records on the run how long its warm-up took and, for an
// auto warm-up that did not settle, says so.
func (r *Run) noteWarmup(spec loadgen.Spec, w *warmed) *Run {
	for _, t := range r.tags {
		t.noteWarmup(spec, w)
	}
	r.d.WarmupS = spec.Warmup.Seconds()
	if w == nil {
		return r
	}
	r.d.WarmupS, r.d.WarmupAuto = (w.took + w.lead).Seconds(), true
	if s := w.warning(); s != "" {
		r.d.Warnings = append(r.d.Warnings, s)
	}
	return r
}

// rpsCV is run.rps_cv: the coefficient of variation of the windows' req/s
// (sample standard deviation over mean), 0 for a flat line; a stall or a
// climb shows as a large one where the mean hides it. A last window
// shorter than half the others is left out (its rate is mostly noise);
// under two windows, or none served, it is NaN.
func (r *Run) rpsCV() float64 {
	ws := r.d.Windows
	if n := len(ws); n >= 2 && r.d.Measured.Seconds()-ws[n-1].Start < (ws[1].Start-ws[0].Start)/2 {
		ws = ws[:n-1]
	}
	rps := make([]float64, len(ws))
	for i, w := range ws {
		rps[i] = w.RPS
	}
	if mean, sd := meanSD(rps); len(rps) >= 2 && mean > 0 {
		return sd / mean
	}
	return math.NaN()
}
