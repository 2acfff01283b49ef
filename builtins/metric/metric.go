// Package metric is the notebook's statistics: compare(), verdict() and the
// metric module. It is the Starlark face of runtime/stats: compare()
// gathers one metric from the runs of two arms and hands it to
// stats.Compare, which gives one estimate, one interval and one test that
// agree: for paired arms (an experiment from abab, or two lists as long) the
// Wilcoxon signed-rank test on the log pair ratios, the Hodges-Lehmann
// estimate and its Walsh-average interval (6 pairs are the fewest that can
// reach p <= 0.05); for unpaired arms the exact Mann-Whitney test, the
// two-sample Hodges-Lehmann estimate and its Moses interval. The index is
// 100 × the estimate and its interval is in the same units, every display of
// the index rounded as the interval's (stats.Shown); values with a coarse
// resolution have their ties spread over their rounding cell and widen it.
// IMPROVES / WORSENS only when p <= alpha (0.05), the interval excludes 100
// and, when set, the gain reaches min_effect; else "~" with the reason in
// words. The seeds' acceptance rule (every B beats every A, gain beyond the
// spread of the A runs or of an A-A control) is its own field, accepted,
// shown beside the verdict.
//
// compare also refuses a run a guard marked invalid (allow_invalid) and a
// run in which more than 1 % of the requests failed (allow_errors), and
// says in one line beside the verdict when the box was busy during the runs
// (foreign CPU, load, steal; interference.go). In a record, the comparison that
// verdict(...) names is the headline and the others are secondary, judged
// on their Holm-adjusted p (family.go); "kept" needs a headline that
// IMPROVES, or override = "why".
//
// Top-level builtins:
//
//	compare(exp_or_a, b = None, metric = "rps", better = by metric, name = "", a_label = "", b_label = "", alpha = 0.05,
//	        min_effect = None, paired = None, resolution = None, allow_invalid = False, allow_errors = False) -> comparison
//	    exp_or_a is an experiment from abab (arms[0] is A, arms[1] is B) or a
//	    list of runs or numbers with b the other list; metric is an attribute
//	    name of a run or a function run -> number. better defaults by the
//	    metric's name (metricname.Direction): "higher" for rps, tps, count and
//	    NAME_per_s, "lower" for latency, time, cost and failure figures (p99,
//	    mean, max, errors, NAME_ms, NAME_per_req, ...); for a function or
//	    another name it must be given. min_effect: 0.02 or "2%".
//	    paired: None pairs an experiment's arms and two lists as long, True
//	    insists, False compares them unpaired. resolution: the step the
//	    values were rounded to (5 for latencies in steps of 5 ms), which
//	    widens the interval for what rounding could hide; None infers it
//	    only from a grid the data show (two runs of an arm one step apart)
//	    and takes values that are merely round (exact counts) as exact.
//	    Attributes: verdict, reason, index, ratio, gain_pct, ci (index
//	    units), ci_ratio, ci_range, ci_method, design, paired, test, p_value,
//	    alpha, min_effect, busy, accepted,
//	    acceptance, every_b_beats_every_a, aa_spread_pct, spread_source,
//	    mean_a/b, geomean_a/b, median_a/b, median_ci_a/b, min_a/b, max_a/b,
//	    a, b, ratios, metric, better, a_label, b_label, sentence, warnings,
//	    unit (of capacities compared: "users", "req/s"; the sentence then
//	    starts "capacity 8 -> 16 users").
//	equivalent(a, b, allow_vacuous = False, allow_mismatch = False) -> struct(ok, compared, mismatch_count, mismatches, missing, distinct_a, distinct_b, vacuous, summary)
//	    fails when the arms answer differently, unless allow_mismatch.
//	verdict(status, headline = None, summary = "", equivalence = None, require_accepted = False, override = "", aim = None, risk = "") -> verdict
//	    status: "kept", "reverted", "no effect", "open", "discarded", "inconclusive".
//	    The record opens with its decision row (candidate = summary, metric,
//	    before -> after, gain, cost / risk: the secondary comparisons that
//	    worsen and risk, evidence, recommendation = status); .row is it.
//	    "kept" needs a headline that IMPROVES (WORSENS with aim = "lower"
//	    or "higher" against the metric's better; or override = "why", shown
//	    in the record) and equivalence: a passing equivalent(...) or a
//	    string saying why the arms cannot answer differently; with
//	    require_accepted, also a headline the seeds' rule accepts.
//	bars(items) -> bars
//	    items: comparisons or (label, index) tuples.
//
// The metric module:
//
//	metric.mean(xs) -> float
//	metric.median(xs) -> float
//	metric.median_ci(xs, confidence = 0.95) -> (median, low, high)
//	metric.ratio_ci(a, b, confidence = 0.95) -> (low, high) of b/a, as compare's ci_ratio (paired when as long);
//	    (None, None) when none (fewer than 6 pairs at 0.95)
//	metric.bootstrap_ci(a, b, confidence = 0.95, reps = 2000) -> (low, high) of mean(b)/mean(a), seeded;
//	    a percentile bootstrap, too narrow below about 10 pairs: compare does not use it
//	metric.mann_whitney(a, b) -> two-sided p-value
//	metric.chance_all_above(na, nb) -> probability that nb values all beat na by chance
//	metric.per_request(total, count = "requests") -> function run -> run.total / run.count
//	metric.capacity_search(measure, slo, lo, hi, factor = 2, resolution = "2%", confidence = 0.95,
//	                       repeats = 10, max_runs = 80, unit = None, label = "") -> capacity
//	    the search @std/capacity.star's capacity() runs (package capacity):
//	    measure(load, repeat) returns one run (checkpointed), or struct(run,
//	    busy); call capacity() rather than this.
package metric

import (
	_ "embed"
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/stats"
)

// Module is the metric module: metric, compare, equivalent, verdict, bars
// and compare_profiles; the decoders of what they make; the method as an
// input of every cell that judges; and the record pass that adjusts a
// notebook's comparisons as one family (family.go).
func Module() runtime.Module {
	return runtime.Module{
		Name: "metric",
		Globals: starlark.StringDict{
			"metric":           members,
			"compare":          starlark.NewBuiltin("compare", compareBuiltin),
			"equivalent":       starlark.NewBuiltin("equivalent", equivalentBuiltin),
			"verdict":          starlark.NewBuiltin("verdict", verdictBuiltin),
			"bars":             starlark.NewBuiltin("bars", barsBuiltin),
			"compare_profiles": starlark.NewBuiltin("compare_profiles", compareProfilesBuiltin), // profiles.go
		},
		Decoders: codec.Types{
			"comparison":         decodeComparison,
			"verdict":            decodeVerdict,
			"bars":               decodeBars,
			"profile_comparison": starprofile.DecodeComparison,
			"capacity":           decodeCapacity,
		},
		Inputs: map[string]runtime.InputChecker{"method": checkMethod, "profile_method": checkProfileMethod},
		Named:  []string{"comparison"},
		Pass:   adjustRecord,
		Docs:   docs,
	}
}

// docs is the module's reference (benchbook help metric).
//
//go:embed reference.md
var docs string

// members are metric.mean, metric.median and the other functions of
// samples.
var members = &starlarkstruct.Module{
	Name: "metric",
	Members: starlark.StringDict{
		"mean":             starlark.NewBuiltin("metric.mean", sampleFunc(stats.Mean)),
		"median":           starlark.NewBuiltin("metric.median", sampleFunc(stats.Median)),
		"median_ci":        starlark.NewBuiltin("metric.median_ci", medianCIBuiltin),
		"bootstrap_ci":     starlark.NewBuiltin("metric.bootstrap_ci", bootstrapBuiltin),
		"ratio_ci":         starlark.NewBuiltin("metric.ratio_ci", ratioCIBuiltin),
		"mann_whitney":     starlark.NewBuiltin("metric.mann_whitney", mannWhitneyBuiltin),
		"chance_all_above": starlark.NewBuiltin("metric.chance_all_above", chanceBuiltin),
		"per_request":      starlark.NewBuiltin("metric.per_request", perRequest),
		"capacity_search":  starlark.NewBuiltin("metric.capacity_search", capacitySearchBuiltin), // capacity.go
	},
}

// checkMethod is the version of a method a cached cell names.
func checkMethod(name string) (string, error) {
	switch name {
	case methodName:
		return methodVersion, nil
	case equivalenceMethod:
		return equivalenceVersion, nil
	case capacityMethod:
		return capacityVersion, nil
	}
	return "", fmt.Errorf("unknown method")
}

// The statistical method is an input of every cell that compares, judges
// equivalence or decides: a cached comparison made by an earlier method
// (issue 13: p = 0 under ties, verdicts that ignored p; version 2: better
// "higher" for every metric, p99 included; version 3: the index a ratio of
// arithmetic means and the seeds' rule a veto on the verdict; version 4: an
// unpaired p beside a paired t-interval, "_mb_s" read as seconds, no
// resolution, no error share, no interference; version 5: paired intervals
// on rounded values made on the rounded values themselves, a bare "mb_s"
// read as seconds) goes stale and is computed again, and the record names
// the method each result came from.
// methodVersion is a variable only so that a test can stand in for the
// next method.
const methodName = "metric"

var (
	methodVersion = "7: paired = Wilcoxon signed-rank, Hodges-Lehmann, Walsh interval; unpaired = Mann-Whitney, Hodges-Lehmann, Moses interval; ties spread over their rounding cell, then resolution-widened; failure words before rate suffixes, a unit name alone read as the unit; runs over 1 % errors refused; busy box in one line for all the runs, not in the sentence; kept needs the headline its aim names"
)

func recordMethod(thread *starlark.Thread) {
	runtime.AddInput(thread, runtime.Input{Kind: "method", Name: methodName, Hash: methodVersion})
}

// floats reads a non-empty list of numbers.
func floats(fn string, v starlark.Value) ([]float64, error) {
	xs, err := list(v, "samples")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		f, ok := starlark.AsFloat(x)
		if !ok {
			return nil, fmt.Errorf("%s: element %d is %s, want a number", fn, i, x.Type())
		}
		out[i] = f
	}
	if err := stats.CheckFinite("samples", out); err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	return out, nil
}

// positive reads a list of numbers a ratio can be taken of.
func positive(fn *starlark.Builtin, arm string, v starlark.Value) ([]float64, error) {
	xs, err := floats(fn.Name(), v)
	if err == nil {
		err = stats.Check(arm, xs)
		if err != nil {
			err = fmt.Errorf("%s: %w", fn.Name(), err)
		}
	}
	return xs, err
}

func sampleFunc(f func([]float64) float64) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v starlark.Value
		if err := starlark.UnpackPositionalArgs(fn.Name(), args, kwargs, 1, &v); err != nil {
			return nil, err
		}
		xs, err := floats(fn.Name(), v)
		if err != nil {
			return nil, err
		}
		return starlark.Float(f(xs)), nil
	}
}

func medianCIBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	conf := stats.Confidence
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "xs", &v, "confidence?", &conf); err != nil {
		return nil, err
	}
	if err := checkConfidence(fn.Name(), conf); err != nil {
		return nil, err
	}
	xs, err := floats(fn.Name(), v)
	if err != nil {
		return nil, err
	}
	m, lo, hi := stats.MedianCI(xs, conf)
	return starlark.Tuple{starlark.Float(m), starlark.Float(lo), starlark.Float(hi)}, nil
}

func checkConfidence(fn string, c float64) error {
	if c <= 0 || c >= 1 {
		return fmt.Errorf("%s: confidence must be between 0 and 1, got %g", fn, c)
	}
	return nil
}

// twoSamples reads the arms a and b: finite numbers, and above 0 too when
// a ratio is taken of them.
func twoSamples(fn *starlark.Builtin, a, b starlark.Value, ratio bool) ([]float64, []float64, error) {
	read := func(arm string, v starlark.Value) ([]float64, error) {
		if ratio {
			return positive(fn, arm, v)
		}
		return floats(fn.Name(), v)
	}
	xa, err := read("a", a)
	if err != nil {
		return nil, nil, err
	}
	xb, err := read("b", b)
	return xa, xb, err
}

func bootstrapBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	conf, reps := stats.Confidence, 2000
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "a", &a, "b", &b, "confidence?", &conf, "reps?", &reps); err != nil {
		return nil, err
	}
	if err := checkConfidence(fn.Name(), conf); err != nil {
		return nil, err
	}
	if reps < 100 || reps > 1_000_000 {
		return nil, fmt.Errorf("%s: reps must be between 100 and 1000000, got %d", fn.Name(), reps)
	}
	xa, xb, err := twoSamples(fn, a, b, true)
	if err != nil {
		return nil, err
	}
	lo, hi := stats.BootstrapRatioCI(xa, xb, conf, reps)
	return starlark.Tuple{floatOrNone(lo), floatOrNone(hi)}, nil
}

func ratioCIBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	conf := stats.Confidence
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "a", &a, "b", &b, "confidence?", &conf); err != nil {
		return nil, err
	}
	if err := checkConfidence(fn.Name(), conf); err != nil {
		return nil, err
	}
	xa, xb, err := twoSamples(fn, a, b, true)
	if err != nil {
		return nil, err
	}
	iv := stats.RatioCI(xa, xb, conf)
	return starlark.Tuple{floatOrNone(iv.Low), floatOrNone(iv.High)}, nil
}

func mannWhitneyBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "a", &a, "b", &b); err != nil {
		return nil, err
	}
	xa, xb, err := twoSamples(fn, a, b, false)
	if err != nil {
		return nil, err
	}
	return starlark.Float(stats.MannWhitney(xa, xb)), nil
}

func chanceBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var na, nb int
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "na", &na, "nb", &nb); err != nil {
		return nil, err
	}
	if na < 1 || nb < 1 {
		return nil, fmt.Errorf("%s: na and nb must be >= 1, got %d and %d", fn.Name(), na, nb)
	}
	return starlark.Float(stats.ChanceAllAbove(na, nb)), nil
}

// perRequest returns a metric function: run -> run.<total> / run.<count>.
func perRequest(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var total string
	count := "requests"
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "total", &total, "count?", &count); err != nil {
		return nil, err
	}
	name := total + "/" + count
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var run starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &run); err != nil {
			return nil, err
		}
		t, err := numAttr(run, total)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		n, err := numAttr(run, count)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		if n == 0 {
			return starlark.Float(math.NaN()), fmt.Errorf("%s: %s is 0", b.Name(), count)
		}
		return starlark.Float(t / n), nil
	}), nil
}

func numAttr(v starlark.Value, name string) (float64, error) {
	x, err := getattr(v, name)
	if err != nil {
		return 0, err
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return 0, fmt.Errorf("%s is %s, want a number", name, x.Type())
	}
	return f, nil
}
