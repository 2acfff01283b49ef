package metric

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/builtins/internal/metricname"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/stats"
)

// compareArgs are compare's arguments after unpacking.
type compareArgs struct {
	expOrA, b      starlark.Value
	metric         starlark.Value
	better         string
	name           string
	aLabel, bLabel string
	alpha          float64
	minEffect      starlark.Value // None, a fraction (0.02) or a string "2%"
	allowInvalid   bool           // take runs a guard marked invalid (a warning, not an error)
	allowErrors    bool           // take runs in which many requests failed (a warning, not an error)
	paired         starlark.Value // None (pairs for an experiment or equal lists), True or False
	resolution     starlark.Value // the step the values were rounded to (a number); 0 or None infers it from the data
}

// compareBuiltin implements
// compare(exp_or_a, b = None, metric = "rps", better = by metric, name = "", a_label = "", b_label = "", alpha = 0.05,
// min_effect = None, paired = None, resolution = None, allow_invalid = False, allow_errors = False).
func compareBuiltin(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	ca := compareArgs{b: starlark.None, metric: starlark.String("rps"), alpha: stats.DefaultAlpha, minEffect: starlark.None, paired: starlark.None,
		resolution: starlark.None}
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs,
		"exp_or_a", &ca.expOrA, "b?", &ca.b, "metric?", &ca.metric, "better?", &ca.better,
		"name?", &ca.name, "a_label?", &ca.aLabel, "b_label?", &ca.bLabel, "alpha?", &ca.alpha,
		"min_effect?", &ca.minEffect, "paired?", &ca.paired, "resolution?", &ca.resolution, "allow_invalid?", &ca.allowInvalid,
		"allow_errors?", &ca.allowErrors); err != nil {
		return nil, err
	}
	if _, ok := ca.paired.(starlark.Bool); !ok && ca.paired != starlark.None {
		return nil, fmt.Errorf("compare: paired must be True, False or None, got %s", ca.paired.Type())
	}
	minEffect, err := fraction(ca.minEffect)
	if err != nil {
		return nil, fmt.Errorf("compare: min_effect: %w", err)
	}
	if ca.better == "" {
		var ok bool
		if ca.better, ok = starval.Better(ca.metric); !ok {
			return nil, fmt.Errorf("compare: which way is better for metric %s cannot be told from its name: say better = \"higher\" or \"lower\"", ca.metric)
		}
	}
	if ca.better != "higher" && ca.better != "lower" {
		return nil, fmt.Errorf("compare: better must be \"higher\" or \"lower\", got %q", ca.better)
	}
	if !(ca.alpha > 0 && ca.alpha < 0.5) {
		return nil, fmt.Errorf("compare: alpha must be between 0 and 0.5, got %g", ca.alpha)
	}
	resolution, err := step(ca.resolution)
	if err != nil {
		return nil, err
	}
	in, err := gather(thread, ca)
	if err != nil {
		return nil, err
	}
	in.minEffect, in.resolution = minEffect, resolution
	recordMethod(thread)
	return newComparison(in)
}

// step reads resolution: None or 0 (inferred from the data) or the step
// the values were rounded to.
func step(v starlark.Value) (float64, error) {
	if v == starlark.None {
		return 0, nil
	}
	f, ok := starlark.AsFloat(v)
	if !ok || !(f >= 0 && !math.IsInf(f, 1)) {
		return 0, fmt.Errorf("compare: resolution must be the step the values were rounded to (0 or None: inferred from the data), got %s", v)
	}
	return f, nil
}

// fraction reads min_effect: None (0), a fraction below 1 (0.02), or a
// percentage string ("2%", "2 %").
func fraction(v starlark.Value) (float64, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		return 0, nil
	case starlark.String:
		s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(x)), "%"))
		if !strings.HasSuffix(strings.TrimSpace(string(x)), "%") {
			return 0, fmt.Errorf("want a fraction (0.02) or a percentage (\"2%%\"), got %q", string(x))
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f >= 0 && f < 100) {
			return 0, fmt.Errorf("want a percentage from 0 to below 100, got %q", string(x))
		}
		return f / 100, nil
	}
	f, ok := starlark.AsFloat(v)
	if !ok {
		return 0, fmt.Errorf("want a fraction (0.02) or a percentage (\"2%%\"), got %s", v.Type())
	}
	if !(f >= 0 && f < 1) {
		return 0, fmt.Errorf("a number is a fraction from 0 to below 1 (0.02 = 2 %%), got %g; for percent write \"%g%%\"", f, f)
	}
	return f, nil
}

// gather reads the metric of every run of both arms, from an experiment
// (abab's result) or from two lists of runs or numbers.
func gather(thread *starlark.Thread, ca compareArgs) (compareInput, error) {
	in := compareInput{better: ca.better, metric: metricName(ca), alpha: ca.alpha}
	runsA, runsB, control, gates, err := arms(ca, &in)
	if err != nil {
		return in, err
	}
	if in.design, err = design(ca, len(runsA), len(runsB)); err != nil {
		return in, err
	}
	ex := extractor{thread: thread, metric: ca.metric, warnings: map[string]bool{}, allowInvalid: ca.allowInvalid,
		allowErrors: ca.allowErrors || failureMetric(in.metric)}
	if in.a, err = ex.values(runsA, in.aLabel); err != nil {
		return in, err
	}
	if in.b, err = ex.values(runsB, in.bLabel); err != nil {
		return in, err
	}
	if in.control, err = ex.values(control, "control"); err != nil {
		return in, err
	}
	if _, fn := ca.metric.(starlark.Callable); fn && ca.name == "" && len(ex.tags) > 0 {
		in.metric += "[" + strings.Join(ex.tags, ", ") + "]" // the record's label names the tags the function read
	}
	in.box = boxOf(runsA, runsB, gates)
	in.unit = capacityUnit(ca.metric, append(append([]starlark.Value(nil), runsA...), runsB...))
	in.warnings = append(ex.list, tickWarning(ex.ticks)...)
	in.gateBusy = gateBusy(gates)
	return in, nil
}

// design is how the arms are compared: an experiment's arms are pairs (abab
// runs them back to back, pair by pair), two lists are pairs when they are
// as long, and paired = True or False says so outright.
func design(ca compareArgs, na, nb int) (string, error) {
	p, given := ca.paired.(starlark.Bool)
	switch {
	case given && !bool(p):
		return "unpaired", nil
	case given || ca.b == starlark.None:
		if na != nb {
			if !given {
				return "unpaired", nil
			}
			return "", fmt.Errorf("compare: paired = True needs as many runs in each arm, got %d and %d", na, nb)
		}
		return "paired", nil
	}
	return "", nil
}

// failureMetric is a metric that counts failures ("errors", "retries",
// "errors_per_s"): comparing it is the point of runs that fail, so their
// error share does not refuse them.
func failureMetric(name string) bool { return metricname.CountsFailures(name) }

func metricName(ca compareArgs) string {
	if ca.name != "" {
		return ca.name
	}
	if s, ok := ca.metric.(starlark.String); ok {
		return string(s)
	}
	if c, ok := ca.metric.(starlark.Callable); ok && c.Name() != "lambda" {
		return c.Name()
	}
	return "metric"
}

// arms splits the arguments into the runs of A and B, the A-A control runs
// and the gate records, and sets the labels.
func arms(ca compareArgs, in *compareInput) (a, b, control, gates []starlark.Value, err error) {
	if ca.b != starlark.None {
		in.aLabel, in.bLabel = or(ca.aLabel, "A"), or(ca.bLabel, "B")
		a, err = list(ca.expOrA, "exp_or_a")
		if err == nil {
			b, err = list(ca.b, "b")
		}
		return a, b, nil, nil, err
	}
	names, err := attrList(ca.expOrA, "arms")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if len(names) < 2 {
		return nil, nil, nil, nil, fmt.Errorf("compare: the experiment has %d arm(s), need 2 (or pass b = ...)", len(names))
	}
	aName, _ := starlark.AsString(names[0])
	bName, _ := starlark.AsString(names[1])
	in.aLabel, in.bLabel = or(ca.aLabel, aName), or(ca.bLabel, bName)
	runs, _ := getattr(ca.expOrA, "runs")
	d, ok := runs.(*starlark.Dict)
	if !ok {
		return nil, nil, nil, nil, fmt.Errorf("compare: experiment.runs must be a dict, got %s", runs.Type())
	}
	if a, err = dictList(d, aName); err == nil {
		b, err = dictList(d, bName)
	}
	if err != nil {
		return nil, nil, nil, nil, err
	}
	control, _ = attrList(ca.expOrA, "control")
	gates, _ = attrList(ca.expOrA, "gates")
	return a, b, control, gates, nil
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

func attrList(v starlark.Value, name string) ([]starlark.Value, error) {
	x, err := getattr(v, name)
	if err != nil {
		return nil, fmt.Errorf("compare: exp_or_a is neither an experiment nor a list (with b = ...): %v", err)
	}
	return list(x, name)
}

func dictList(d *starlark.Dict, key string) ([]starlark.Value, error) {
	v, found, _ := d.Get(starlark.String(key))
	if !found {
		return nil, fmt.Errorf("compare: experiment has no runs for arm %q", key)
	}
	return list(v, "runs["+key+"]")
}

func list(v starlark.Value, what string) ([]starlark.Value, error) {
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("compare: %s must be a list, got %s", what, v.Type())
	}
	return slices.Collect(starlark.Elements(it)), nil
}

// extractor reads one metric from runs and collects the runs' own warnings.
type extractor struct {
	thread   *starlark.Thread
	metric   starlark.Value
	warnings map[string]bool
	list     []string
	ticks    []float64 // the distinct ticks (ms) the runs were sent on, open loops only
	tags     []string  // the tags a metric function read in the runs' by_tag

	allowInvalid bool
	allowErrors  bool
}

func (ex *extractor) values(runs []starlark.Value, arm string) ([]float64, error) {
	out := make([]float64, 0, len(runs))
	for i, r := range runs {
		if err := ex.checkValid(r); err != nil {
			return nil, fmt.Errorf("compare: %s run %d: %w", arm, i+1, err)
		}
		if err := ex.checkErrors(r, fmt.Sprintf("%s run %d", arm, i+1)); err != nil {
			return nil, err
		}
		f, err := ex.value(r)
		if err != nil {
			return nil, fmt.Errorf("compare: %s run %d: %w", arm, i+1, err)
		}
		out = append(out, f)
		ex.runWarnings(r, fmt.Sprintf("%s run %d", arm, i+1))
		ex.noteTick(r)
	}
	return out, nil
}

// value reads the metric through the resolver plot.* uses too, so
// "p99" (and a method, or a dict of errors by class) means one thing.
//
// A run notes the tags looked up in its by_tag: those a metric function
// read are gathered for the record's label.
func (ex *extractor) value(r starlark.Value) (float64, error) {
	tr, _ := r.(tagReader)
	if tr != nil {
		tr.TagsRead() // forget what was read before
	}
	f, err := starval.Metric(ex.thread, r, ex.metric)
	if tr != nil {
		for _, t := range tr.TagsRead() {
			if !slices.Contains(ex.tags, t) {
				ex.tags = append(ex.tags, t)
			}
		}
	}
	return f, err
}

// tagReader is a run that notes the tags read in its by_tag.
type tagReader interface{ TagsRead() []string }

// checkValid refuses a run whose guards tripped (its target died, restarted,
// ran out of disk: valid = False) unless allow_invalid = True; the run's own
// warnings then say why it is invalid.
func (ex *extractor) checkValid(r starlark.Value) error {
	hv, ok := r.(starlark.HasAttrs)
	if !ok {
		return nil
	}
	v, err := hv.Attr("valid")
	if err != nil || v == nil || bool(v.Truth()) || ex.allowInvalid {
		return nil
	}
	why, _ := hv.Attr("invalid_reason")
	reason, _ := starlark.AsString(why)
	return fmt.Errorf("invalid run (%s); compare(..., allow_invalid = True) takes it anyway", reason)
}

// runWarnings copies a run's warnings ("generator-bound") into the
// comparison's, once per distinct warning, naming the runs; a run's busy
// box is left to the comparison's one line (Busy), which counts and spans
// every run's figures, instead of one bullet per run.
func (ex *extractor) runWarnings(r starlark.Value, where string) {
	w := starval.Attr(r, "warnings")
	if w == nil {
		return
	}
	ws, err := list(w, "warnings")
	if err != nil {
		return
	}
	boxed := !math.IsNaN(number(r, "foreign_cpu"))
	for _, x := range ws {
		s, ok := starlark.AsString(x)
		if !ok {
			s = x.String()
		}
		if boxed && strings.HasPrefix(s, busybox.BusyPrefix) {
			continue // the comparison's Busy line counts it, with its figures
		}
		line := where + ": " + s
		if !ex.warnings[line] {
			ex.warnings[line] = true
			ex.list = append(ex.list, line)
		}
	}
}

// noteTick records the tick an open-loop run was sent on (tick_ms).
func (ex *extractor) noteTick(r starlark.Value) {
	v := starval.Attr(r, "tick_ms")
	if v == nil {
		return
	}
	f, ok := starlark.AsFloat(v)
	if ok && !slices.Contains(ex.ticks, f) {
		ex.ticks = append(ex.ticks, f)
	}
}

// tickWarning says when the runs were sent on different ticks (the
// default tick changes at 2,500 req/s per event loop): each run's latency
// includes up to its tick of waiting, so part of a latency difference may
// be the generator's.
func tickWarning(ticks []float64) []string {
	if len(ticks) < 2 {
		return nil
	}
	slices.Sort(ticks)
	parts := make([]string, len(ticks))
	for i, t := range ticks {
		parts[i] = fmt.Sprintf("%g ms", t)
	}
	return []string{fmt.Sprintf("the runs were sent on different ticks (%s): each latency includes up to its run's tick of waiting, so up to %g ms of a latency difference may be the generator's; give every run the same tick (tick = 0 sends each request at its intended start)",
		strings.Join(parts, ", "), ticks[len(ticks)-1]-ticks[0])}
}

// gateBusy says how many runs the load gate marked busy: "marked 3 of 16
// runs busy (runs 2, 5, 9 in execution order)", "" for none.
func gateBusy(gates []starlark.Value) string {
	var busy []string
	for i, g := range gates {
		v, err := getattr(g, "busy")
		if err == nil && v.Truth() {
			busy = append(busy, fmt.Sprint(i+1))
		}
	}
	if len(busy) == 0 {
		return ""
	}
	return fmt.Sprintf("marked %d of %d runs busy (runs %s in execution order)", len(busy), len(gates), strings.Join(busy, ", "))
}

// getattr is Starlark's x.name for values that have attributes.
func getattr(v starlark.Value, name string) (starlark.Value, error) {
	hv, ok := v.(starlark.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no attribute %q", v.Type(), name)
	}
	x, err := hv.Attr(name)
	if err != nil {
		return nil, err
	}
	if x == nil {
		return nil, fmt.Errorf("%s has no attribute %q", v.Type(), name)
	}
	return x, nil
}
