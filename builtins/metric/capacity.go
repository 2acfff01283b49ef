package metric

import (
	"fmt"
	"math"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/builtins/internal/metricname"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/metric/capacity"
	"github.com/benchbook/benchbook/runtime"
)

// capacitySearchBuiltin implements
// metric.capacity_search(measure, slo, lo, hi, factor = 2, resolution = "2%", confidence = 0.95,
// repeats = 10, max_runs = 80, unit = None, label = ""): the search that
// @std/capacity.star's capacity() runs (package capacity); measure(load,
// repeat) returns one checkpointed run, or struct(run, busy) with a load
// gate's word.
func capacitySearchBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var measure starlark.Callable
	var slo *starlark.Dict
	var lo, hi starlark.Value
	var resolution, unit starlark.Value = starlark.String("2%"), starlark.None
	var factorArg, confidenceArg starlark.Value = starlark.MakeInt(2), starlark.Float(0.95)
	repeats, maxRuns := 10, 80
	var label string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "measure", &measure, "slo", &slo, "lo", &lo, "hi", &hi,
		"factor?", &factorArg, "resolution?", &resolution, "confidence?", &confidenceArg, "repeats?", &repeats,
		"max_runs?", &maxRuns, "unit?", &unit, "label?", &label); err != nil {
		return nil, err
	}
	fail := func(err error) (starlark.Value, error) { return nil, fmt.Errorf("capacity: %w", err) }
	factor, ok1 := starval.Number(factorArg)
	confidence, ok2 := starval.Number(confidenceArg)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("capacity: factor and confidence must be numbers, got %s and %s", factorArg.Type(), confidenceArg.Type())
	}
	limits, err := sloLimits(slo)
	if err != nil {
		return fail(err)
	}
	o := capacity.Options{Factor: factor, Confidence: confidence, MaxRepeats: repeats, MaxRuns: maxRuns}
	if err := loadRange(&o, lo, hi); err != nil {
		return fail(err)
	}
	if o.Resolution, o.Relative, err = resolutionArg(resolution); err != nil {
		return fail(err)
	}
	if err := o.Check(); err != nil {
		return fail(err)
	}
	c := &Capacity{Limits: limits, Label: label, Integer: o.Integer, Confidence: confidence, Lo: o.Lo, Hi: o.Hi}
	if unit != starlark.None {
		s, ok := starlark.AsString(unit)
		if !ok {
			return nil, fmt.Errorf("capacity: unit must be a string (\"users\", \"req/s\"), got %s", unit.Type())
		}
		c.Unit = s
	}
	m := capacityMeasure{th: th, fn: measure, c: c, outer: runtime.Step(th), unitGiven: unit != starlark.None}
	defer runtime.SetStep(th, m.outer)
	res, err := capacity.Search(o, limits, m.measure)
	if err != nil {
		return nil, err
	}
	c.Result = *res
	runtime.AddInput(th, runtime.Input{Kind: "method", Name: capacityMethod, Hash: capacityVersion})
	return c, nil
}

// The search's method is an input of the cell that runs it, as compare's
// is: a capacity cached by an earlier search goes stale.
const (
	capacityMethod  = "capacity"
	capacityVersion = "1: step up by factor, bisect to the resolution, both ends judged by a sequential sign test at (1 - confidence) / 2 each, the choosing run left out"
)

// capacityMeasure calls the notebook's measure and reads each run.
type capacityMeasure struct {
	th        *starlark.Thread
	fn        starlark.Callable
	c         *Capacity
	outer     string // the step the search runs inside ("pair 2/4 B")
	unitGiven bool
}

func (m *capacityMeasure) measure(level float64, repeat int) (capacity.Reading, error) {
	load := m.c.load(level)
	step := fmt.Sprintf("capacity %s, run %d", m.c.loadText(level), repeat+1)
	if m.outer != "" {
		step = m.outer + " " + step
	}
	runtime.SetStep(m.th, step)
	t0 := time.Now()
	v, err := starlark.Call(m.th, m.fn, starlark.Tuple{load, starlark.MakeInt(repeat)}, nil)
	if err != nil {
		return capacity.Reading{}, err
	}
	r := capacity.Reading{Seconds: time.Since(t0).Seconds()}
	run := starval.Attr(v, "run")
	if run == nil {
		run = v // a run alone, without a gate's word
	}
	r.Busy = truth(starval.Attr(v, "busy")) || runBusy(run)
	for _, lim := range m.c.Limits {
		x, err := starval.Metric(m.th, run, starlark.String(lim.Metric))
		if err != nil {
			return r, fmt.Errorf("capacity: slo[%q]: %w", lim.Metric, err)
		}
		r.Values = append(r.Values, x)
	}
	r.GenBound = genBound(run)
	if hv := starval.Attr(run, "valid"); hv != nil && !truth(hv) {
		r.Invalid, _ = starlark.AsString(starval.Attr(run, "invalid_reason"))
		if r.Invalid == "" {
			r.Invalid = "a guard tripped"
		}
	}
	if !m.unitGiven && m.c.Unit == "" {
		m.c.Unit = unitOf(run)
	}
	m.c.runs = append(m.c.runs, run)
	return r, nil
}

// sloLimits reads slo = {"p99": 100, "error_rate": 0.001}: a name compare
// reads (an attribute, "pNN") and its limit, whose way follows from the
// name (a latency stays under it, a rate over it), or ("<=", x) / (">=", x).
func sloLimits(d *starlark.Dict) ([]capacity.Limit, error) {
	if d == nil || d.Len() == 0 {
		return nil, fmt.Errorf(`slo must be a dict of limits on run figures, such as {"p99": 100, "error_rate": 0.001}`)
	}
	var out []capacity.Limit
	for _, kv := range d.Items() {
		name, ok := starlark.AsString(kv[0])
		if !ok || name == "" {
			return nil, fmt.Errorf("slo: a limit's name must be a run figure's name, got %s", kv[0])
		}
		lim := capacity.Limit{Metric: name}
		switch v := kv[1].(type) {
		case starlark.Tuple:
			op, _ := starlark.AsString(v.Index(0))
			x, ok := starval.Number(v.Index(min(1, v.Len()-1)))
			if v.Len() != 2 || (op != "<=" && op != ">=") || !ok {
				return nil, fmt.Errorf(`slo[%q]: want a number, or ("<=", x) or (">=", x), got %s`, name, v)
			}
			lim.Value, lim.Max = x, op == "<="
		default:
			x, ok := starval.Number(v)
			if !ok {
				return nil, fmt.Errorf(`slo[%q]: want a number, or ("<=", x) or (">=", x), got %s`, name, v.Type())
			}
			better, known := metricname.Direction(name)
			if !known {
				return nil, fmt.Errorf(`slo[%q]: which way it must stay cannot be told from its name: give ("<=", %s) or (">=", %s)`, name, kv[1], kv[1])
			}
			lim.Value, lim.Max = x, better == "lower"
		}
		if math.IsNaN(lim.Value) || math.IsInf(lim.Value, 0) {
			return nil, fmt.Errorf("slo[%q]: the limit must be a finite number, got %v", name, lim.Value)
		}
		out = append(out, lim)
	}
	return out, nil
}

// loadRange reads lo and hi: two ints search whole numbers (users), else
// a continuous load (a rate).
func loadRange(o *capacity.Options, lo, hi starlark.Value) error {
	_, li := lo.(starlark.Int)
	_, hiInt := hi.(starlark.Int)
	o.Integer = li && hiInt
	var ok1, ok2 bool
	o.Lo, ok1 = starval.Number(lo)
	o.Hi, ok2 = starval.Number(hi)
	if !ok1 || !ok2 {
		return fmt.Errorf("lo and hi must be numbers (ints for users, floats for a rate), got %s and %s", lo.Type(), hi.Type())
	}
	return nil
}

// resolutionArg reads resolution: a number (absolute) or "N%" (of the
// level).
func resolutionArg(v starlark.Value) (abs, rel float64, err error) {
	if s, ok := starlark.AsString(v); ok {
		t := strings.TrimSpace(s)
		if p, ok := strings.CutSuffix(t, "%"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || !(f > 0 && f < 100) {
				return 0, 0, fmt.Errorf("resolution: want a percentage above 0 and below 100, got %q", s)
			}
			return 0, f / 100, nil
		}
		return 0, 0, fmt.Errorf(`resolution: want a number (a step of load) or a percentage ("2%%"), got %q`, s)
	}
	f, ok := starval.Number(v)
	if !ok || !(f > 0) || math.IsInf(f, 0) {
		return 0, 0, fmt.Errorf(`resolution: want a number > 0 (a step of load) or a percentage ("2%%"), got %s`, v)
	}
	return f, 0, nil
}

// runBusy says whether a workload run's own figures say its box was busy
// (foreign CPU or steal over its window, as its warning does).
func runBusy(run starlark.Value) bool {
	f, ok1 := starval.Number(starval.Attr(run, "foreign_cpu"))
	s, ok2 := starval.Number(starval.Attr(run, "steal_cpu"))
	return (ok1 && f >= busybox.BusyCores(goruntime.NumCPU())) || (ok2 && s >= busybox.BusyStealCores)
}

// genBound is why a run's generator may have set the pace, from its
// figures: "" when it did not (or the run cannot say).
func genBound(run starlark.Value) string {
	if !truth(starval.Attr(run, "gen_bound")) {
		return ""
	}
	var why []string
	if share, ok := starval.Number(starval.Attr(run, "gen_cpu_share")); ok && !math.IsNaN(share) {
		why = append(why, fmt.Sprintf("its CPU %.0f %% of the CPUs it may use", 100*share))
	}
	if lag, ok := starval.Number(starval.Attr(run, "think_lag_ms")); ok && lag > 0 {
		why = append(why, fmt.Sprintf("its users' requests typically sent %.2f ms after their think", lag))
	}
	if len(why) == 0 {
		return "gen_bound"
	}
	return strings.Join(why, ", ")
}

// unitOf is the load's unit from a run: its users, or its rate.
func unitOf(run starlark.Value) string {
	if n, ok := starval.Number(starval.Attr(run, "rate")); ok && n > 0 {
		return "req/s"
	}
	if n, ok := starval.Number(starval.Attr(run, "users")); ok && n > 0 {
		return "users"
	}
	return ""
}

func truth(v starlark.Value) bool { return v != nil && bool(v.Truth()) }

// capacityUnit is the unit of the values compare reads when they are
// capacities (metric "capacity" or "value") of one unit: "" otherwise.
func capacityUnit(metric starlark.Value, runs []starlark.Value) string {
	if m, ok := metric.(starlark.String); !ok || (m != "capacity" && m != "value") {
		return ""
	}
	unit := ""
	for i, r := range runs {
		c, ok := r.(*Capacity)
		if !ok || (i > 0 && c.Unit != unit) {
			return ""
		}
		unit = c.Unit
	}
	return unit
}
