// Package metric compares the arms of an experiment the way the seeds'
// method does, with statistics that say what they mean: index values
// (before = 100); the verdict IMPROVES / WORSENS only when the exact
// Mann-Whitney test gives p <= alpha (0.05 by default, as benchstat) and
// the seeds' rule holds (every B beats every A, and the mean gain exceeds
// the spread of the A runs, or the A-A spread when a control ran), else "~"
// with the reason in words; a 95 % t-interval of the ratio B/A on the logs
// of the per-pair ratios; median intervals; warnings that travel with the
// result.
//
// Mann-Whitney p is exact up to 60 values in all, ties included (the
// permutation distribution conditional on the tie pattern), and two-sided
// by doubling the smaller tail; above, the normal approximation with tie
// correction. With 3 pairs or fewer no arrangement reaches p <= 0.05: 4
// pairs are the fewest that can (p = 2/70 = 0.029).
//
// Top-level builtins:
//
//	compare(exp_or_a, b = None, metric = "rps", better = by metric, name = "", a_label = "", b_label = "", alpha = 0.05) -> comparison
//	    exp_or_a is an experiment from abab (arms[0] is A, arms[1] is B) or a
//	    list of runs or numbers with b the other list; metric is an attribute
//	    name of a run or a function run -> number. better defaults to
//	    "higher" for rps and count, "lower" for latency, time, cost and
//	    failure figures (p99, mean, max, errors, NAME_ms, NAME_per_req, ...);
//	    for a function or another name it must be given.
//	equivalent(a, b, allow_vacuous = False, allow_mismatch = False) -> struct(ok, compared, mismatch_count, mismatches, missing, distinct_a, distinct_b, vacuous, summary)
//	    fails when the arms answer differently, unless allow_mismatch.
//	verdict(status, headline = None, summary = "", equivalence = None) -> verdict
//	    status: "kept", "reverted", "no effect", "open", "discarded", "inconclusive".
//	    "kept" needs equivalence: a passing equivalent(...) or a string
//	    saying why the arms cannot answer differently.
//	bars(items) -> bars
//	    items: comparisons or (label, index) tuples.
//
// The metric module:
//
//	metric.mean(xs) -> float
//	metric.median(xs) -> float
//	metric.median_ci(xs, confidence = 0.95) -> (median, low, high)
//	metric.ratio_ci(a, b, confidence = 0.95) -> (low, high) of the ratio b/a, as compare's ci
//	metric.bootstrap_ci(a, b, confidence = 0.95, reps = 2000) -> (low, high) of mean(b)/mean(a), seeded;
//	    a percentile bootstrap, too narrow below about 10 pairs: compare does not use it
//	metric.mann_whitney(a, b) -> two-sided p-value
//	metric.chance_all_above(na, nb) -> probability that nb values all beat na by chance
//	metric.per_request(total, count = "requests") -> function run -> run.total / run.count
package metric

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
)

// Module is the metric module.
var Module = &starlarkstruct.Module{
	Name: "metric",
	Members: starlark.StringDict{
		"mean":             starlark.NewBuiltin("metric.mean", sampleFunc(mean)),
		"median":           starlark.NewBuiltin("metric.median", sampleFunc(median)),
		"median_ci":        starlark.NewBuiltin("metric.median_ci", medianCIBuiltin),
		"bootstrap_ci":     starlark.NewBuiltin("metric.bootstrap_ci", bootstrapBuiltin),
		"ratio_ci":         starlark.NewBuiltin("metric.ratio_ci", ratioCIBuiltin),
		"mann_whitney":     starlark.NewBuiltin("metric.mann_whitney", mannWhitneyBuiltin),
		"chance_all_above": starlark.NewBuiltin("metric.chance_all_above", chanceBuiltin),
		"per_request":      starlark.NewBuiltin("metric.per_request", perRequest),
	},
}

func init() {
	runtime.Predeclare("metric", Module)
	runtime.Predeclare("compare", starlark.NewBuiltin("compare", compareBuiltin))
	runtime.Predeclare("equivalent", starlark.NewBuiltin("equivalent", equivalentBuiltin))
	runtime.Predeclare("verdict", starlark.NewBuiltin("verdict", verdictBuiltin))
	runtime.Predeclare("bars", starlark.NewBuiltin("bars", barsBuiltin))
	runtime.RegisterInputKind("method", func(name string) (string, error) {
		if name != methodName {
			return "", fmt.Errorf("unknown method")
		}
		return methodVersion, nil
	})
}

// The statistical method is an input of every cell that compares, judges
// equivalence or decides: a cached comparison made by an earlier method
// (issue 13: p = 0 under ties, verdicts that ignored p; version 2: better
// "higher" for every metric, p99 included) goes stale and is computed
// again, and the record names the method each result came from.
const (
	methodName    = "metric"
	methodVersion = "3: exact Mann-Whitney under ties, alpha 0.05, t-interval on log ratios, better from the metric, tick warnings"
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
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty sample", fn)
	}
	return out, nil
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
	conf := confidence
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
	m, lo, hi := medianCI(xs, conf)
	return starlark.Tuple{starlark.Float(m), starlark.Float(lo), starlark.Float(hi)}, nil
}

func checkConfidence(fn string, c float64) error {
	if c <= 0 || c >= 1 {
		return fmt.Errorf("%s: confidence must be between 0 and 1, got %g", fn, c)
	}
	return nil
}

func twoSamples(fn *starlark.Builtin, a, b starlark.Value) ([]float64, []float64, error) {
	xa, err := floats(fn.Name(), a)
	if err != nil {
		return nil, nil, err
	}
	xb, err := floats(fn.Name(), b)
	return xa, xb, err
}

func bootstrapBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	conf, reps := confidence, 2000
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "a", &a, "b", &b, "confidence?", &conf, "reps?", &reps); err != nil {
		return nil, err
	}
	if err := checkConfidence(fn.Name(), conf); err != nil {
		return nil, err
	}
	if reps < 100 || reps > 1_000_000 {
		return nil, fmt.Errorf("%s: reps must be between 100 and 1000000, got %d", fn.Name(), reps)
	}
	xa, xb, err := twoSamples(fn, a, b)
	if err != nil {
		return nil, err
	}
	lo, hi := bootstrapRatioCI(xa, xb, conf, reps)
	return starlark.Tuple{floatOrNone(lo), floatOrNone(hi)}, nil
}

func ratioCIBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	conf := confidence
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "a", &a, "b", &b, "confidence?", &conf); err != nil {
		return nil, err
	}
	if err := checkConfidence(fn.Name(), conf); err != nil {
		return nil, err
	}
	xa, xb, err := twoSamples(fn, a, b)
	if err != nil {
		return nil, err
	}
	lo, hi := ratioCI(xa, xb, conf)
	return starlark.Tuple{floatOrNone(lo), floatOrNone(hi)}, nil
}

func mannWhitneyBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, b starlark.Value
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "a", &a, "b", &b); err != nil {
		return nil, err
	}
	xa, xb, err := twoSamples(fn, a, b)
	if err != nil {
		return nil, err
	}
	return starlark.Float(mannWhitney(xa, xb)), nil
}

func chanceBuiltin(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var na, nb int
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "na", &na, "nb", &nb); err != nil {
		return nil, err
	}
	if na < 1 || nb < 1 {
		return nil, fmt.Errorf("%s: na and nb must be >= 1, got %d and %d", fn.Name(), na, nb)
	}
	return starlark.Float(chanceAllAbove(na, nb)), nil
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
