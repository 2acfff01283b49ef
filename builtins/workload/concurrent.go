package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// workload.concurrent(scenarios, duration = None, warmup = "1s",
// window = "1s", observe = [], label = "") runs several loads at once:
// reads at N clients while writes arrive at R/s, an import beside a
// search (k6's scenarios, Gatling's injection profiles side by side).
//
// scenarios is {name: fn}: each fn calls one workload.http, sql or mongo,
// which inside it does not run but joins the group. Every scenario then
// starts at one instant and shares one warm-up and one measurement window
// (the group's duration, or the one all scenarios give; its warmup and
// window, which a scenario may repeat but not contradict). The observers
// (the group's observe and every scenario's) and the run guards watch the
// window once for all. It returns a scenarios value: a dict of runs by
// name, whose .all is the merged run (kind "concurrent"; its by_tag the
// scenarios' runs, so compare(exp, metric = "p99[reads]") reads one of
// them). The terminal shows one progress line per scenario; Ctrl-C stops
// them all, each keeping what it measured. A scenario may run on agents
// (agents = fleet): its agents start at the group's instant.

// collectorKey holds, on the thread, the group whose scenario functions
// are being called.
const collectorKey = "benchbook.workload.concurrent"

// collector gathers the loads the scenario functions make.
type collector struct {
	current string
	loads   map[string]*load
}

// collecting is the group a load builtin's call joins, nil outside
// workload.concurrent's scenario functions.
func collecting(th *starlark.Thread) *collector {
	c, _ := th.Local(collectorKey).(*collector)
	return c
}

// add takes a scenario's load: one a scenario, run by the group.
func (c *collector) add(th *starlark.Thread, l *load) (starlark.Value, error) {
	switch {
	case c.loads[c.current] != nil:
		return nil, c.refuse(l, fmt.Errorf("scenario %q calls a second workload: a scenario is one workload", c.current))
	case l.la.warmup.auto:
		return nil, c.refuse(l, fmt.Errorf(`warmup = "auto" in scenario %q: the scenarios share one warm-up; give workload.concurrent a duration`, c.current))
	case l.la.profile.on:
		return nil, c.refuse(l, fmt.Errorf("profile in scenario %q: not supported in a concurrent scenario", c.current))
	}
	c.loads[c.current] = l
	return starlark.None, nil
}

func (c *collector) refuse(l *load, err error) error {
	if l.close != nil {
		l.close()
	}
	return fmt.Errorf("%s: %w", l.name, err)
}

// closeAll releases the targets the scenarios opened.
func (c *collector) closeAll() {
	for _, l := range c.loads {
		if l != nil && l.close != nil {
			l.close()
		}
	}
}

// groupArgs are workload.concurrent's own arguments.
type groupArgs struct {
	scenarios *starlark.Dict
	duration  starval.PositiveDuration
	warmup    warmupArg
	window    starval.PositiveDuration
	observe   *starlark.List
	label     string
	given     map[string]bool
}

func concurrentBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	g := groupArgs{warmup: warmupArg{d: time.Second}}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "scenarios", &g.scenarios, "duration?", &g.duration,
		"warmup?", &g.warmup, "window?", &g.window, "observe?", &g.observe, "label?", &g.label); err != nil {
		return nil, err
	}
	g.given = (&loadArgs{}).note(kwargs).given
	if g.warmup.auto {
		return nil, fmt.Errorf(`%s: warmup = "auto" is not supported: give a duration`, b.Name())
	}
	if collecting(th) != nil {
		return nil, fmt.Errorf("%s: a scenario cannot itself run workload.concurrent", b.Name())
	}
	names, c, err := collect(th, b.Name(), g.scenarios)
	if err != nil {
		return nil, err
	}
	defer c.closeAll()
	loads := make([]*load, len(names))
	for i, n := range names {
		loads[i] = c.loads[n]
	}
	timing, err := g.timing(b.Name(), names, loads)
	if err != nil {
		return nil, err
	}
	return runGroup(th, b.Name(), g, names, loads, timing)
}

// collect calls each scenario function with the group listening: each must
// call one load builtin, which joins the group instead of running.
func collect(th *starlark.Thread, name string, scenarios *starlark.Dict) ([]string, *collector, error) {
	if scenarios.Len() == 0 {
		return nil, nil, fmt.Errorf("%s: scenarios is empty", name)
	}
	c := &collector{loads: map[string]*load{}}
	th.SetLocal(collectorKey, c)
	defer th.SetLocal(collectorKey, nil)
	var names []string
	for _, kv := range scenarios.Items() {
		n, ok := starlark.AsString(kv[0])
		if !ok || n == "" || strings.ContainsAny(n, "[]") {
			c.closeAll()
			return nil, nil, fmt.Errorf("%s: scenario names must be non-empty strings without [ or ], got %s", name, kv[0])
		}
		fn, ok := kv[1].(starlark.Callable)
		if !ok {
			c.closeAll()
			return nil, nil, fmt.Errorf("%s: scenario %q must be a function that calls a workload (lambda: workload.http(...)), got %s", name, n, kv[1].Type())
		}
		c.current, c.loads[n] = n, nil
		if _, err := starlark.Call(th, fn, nil, nil); err != nil {
			c.closeAll()
			return nil, nil, fmt.Errorf("%s: scenario %q: %w", name, n, err)
		}
		if c.loads[n] == nil {
			c.closeAll()
			return nil, nil, fmt.Errorf("%s: scenario %q ran no workload: its function must call workload.http, workload.sql or workload.mongo", name, n)
		}
		names = append(names, n)
	}
	return names, c, nil
}

// groupTiming is the one warm-up, window and duration of a group.
type groupTiming struct {
	warmup, window, duration time.Duration
}

// timing reconciles the group's warm-up, window and duration with what the
// scenarios gave: one each, for all.
func (g *groupArgs) timing(name string, names []string, loads []*load) (groupTiming, error) {
	t := groupTiming{warmup: g.warmup.d, window: time.Duration(g.window), duration: time.Duration(g.duration)}
	pick := func(what string, group time.Duration, groupGiven bool, of func(*load) time.Duration) (time.Duration, error) {
		v, from := group, "workload.concurrent"
		for i, l := range loads {
			if !l.la.given[what] {
				continue
			}
			got := of(l)
			if !groupGiven && from == "workload.concurrent" {
				v, from = got, fmt.Sprintf("scenario %q", names[i])
				continue
			}
			if got != v {
				return 0, fmt.Errorf("%s: scenario %q gives %s = %s, %s %s: the scenarios share one %s; give it to workload.concurrent", name, names[i], what, got, from, v, what)
			}
		}
		return v, nil
	}
	var err error
	if t.warmup, err = pick("warmup", t.warmup, g.given["warmup"], func(l *load) time.Duration { return l.la.warmup.d }); err != nil {
		return t, err
	}
	if t.window, err = pick("window", t.window, g.given["window"], func(l *load) time.Duration { return time.Duration(l.la.window) }); err != nil {
		return t, err
	}
	if t.window == 0 {
		t.window = time.Second
	}
	if t.duration, err = pick("duration", t.duration, g.given["duration"], func(l *load) time.Duration { return time.Duration(l.la.duration) }); err != nil {
		return t, err
	}
	if t.duration == 0 {
		return t, fmt.Errorf("%s: duration is required (here, or the same in every scenario)", name)
	}
	if t.duration/t.window > maxWindows {
		return t, fmt.Errorf("%s: window: %s windows of %s is more than %d per run", name, t.duration, t.window, maxWindows)
	}
	return t, nil
}

// runGroup runs the loads as one group and makes the scenarios value.
func runGroup(th *starlark.Thread, name string, g groupArgs, names []string, loads []*load, t groupTiming) (starlark.Value, error) {
	obs, err := groupObservers(th, name, g.observe, loads)
	if err != nil {
		return nil, err
	}
	progress := runtime.Stderr(th)
	board := loadgen.NewBoard(progress, runtime.IsTerminal(progress), names)
	defer board.Close()
	var locals []loadgen.Scenario
	for i, l := range loads {
		if !l.la.given["label"] {
			l.spec.Label = names[i]
		}
		l.spec.Warmup, l.spec.Duration, l.spec.Window = t.warmup, t.duration, t.window
		l.spec.Observers, l.spec.Progress, l.spec.Terminal = nil, board.Slot(i), false
		if l.tgt != nil {
			locals = append(locals, loadgen.Scenario{Spec: l.spec, Target: l.tgt})
		}
	}
	var runs []*Run
	var sink statementSink
	ctx := sink.context(runtime.Context(th))
	if len(locals) == len(loads) {
		results := loadgen.RunConcurrent(ctx, obs, locals, time.Time{})
		for i, l := range loads {
			runs = append(runs, l.finish(results[i], nil))
		}
	} else if runs, err = runWithFleets(ctx, name, names, loads, locals, obs, t); err != nil {
		return nil, err
	}
	board.Close()
	stmts := sink.statements()
	parts := map[string][][]string{}
	for i, l := range loads {
		runs[i].d.Tag = names[i]
		if l.scripts != nil {
			_, parts[names[i]] = l.scripts()
			l.attribute(runs[i], stmts)
		}
	}
	if len(loads) > 1 {
		noteGroupFigures(runs, names, stmts, parts)
	}
	return &Scenarios{names: names, all: mergeScenarios(g.label, names, runs, t)}, nil
}

// runWithFleets runs a group some of whose scenarios run on agents: every
// fleet launches its agents and says when it can start, the group picks
// the latest of those instants, and the fleets and this process's
// scenarios all start at it. The observers watch the window as a fleet's
// coordinator does, and their figures are the group's, per request of all
// its scenarios.
func runWithFleets(ctx context.Context, name string, names []string, loads []*load, locals []loadgen.Scenario, obs []loadgen.Observer, t groupTiming) ([]*Run, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := newStartBarrier(ctx)
	runs := make([]*Run, len(loads))
	errs := make([]error, len(loads))
	parts := make([]*barrierPart, len(loads))
	for i, l := range loads {
		if l.fleet != nil {
			parts[i] = b.join()
		}
	}
	here := b.join() // every part joins before any arrives
	var wg sync.WaitGroup
	for i, l := range loads {
		if l.fleet == nil {
			continue
		}
		wg.Go(func() {
			runs[i], errs[i] = l.fleet.run(ctx, l.name, l.spec, parts[i].arrive)
			parts[i].leave(errs[i])
		})
	}
	at, err := here.arrive(time.Now().Add(200*time.Millisecond), false)
	if err != nil {
		cancel()
		wg.Wait()
		return nil, fmt.Errorf("%s: %w", name, firstError(errs, err))
	}
	watch := fleet.WatchWindow(ctx, loadgen.Spec{Observers: obs, Warmup: t.warmup, Duration: t.duration}, at)
	var results []*loadgen.Result
	if len(locals) > 0 {
		results = loadgen.RunConcurrent(ctx, nil, locals, at)
	}
	wg.Wait()
	for i, l := range loads {
		if l.tgt != nil {
			runs[i], results = l.finish(results[0], nil), results[1:]
		}
	}
	if i := slices.IndexFunc(errs, func(e error) bool { return e != nil }); i >= 0 {
		return nil, fmt.Errorf("%s: scenario %q: %w", name, names[i], errs[i])
	}
	window := loadgen.NewResult()
	for _, r := range runs {
		window.Count += r.d.Count
	}
	watch.Finish(window)
	for _, r := range runs {
		r.windowFigures(window)
	}
	return runs, nil
}

func firstError(errs []error, def error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return def
}

// windowFigures gives r and its tags the group window's observers'
// figures, trips and warnings (runWithFleets).
func (r *Run) windowFigures(w *loadgen.Result) {
	r.d.Observed = w.Observed
	r.d.Trips = append(r.d.Trips, w.Trips...)
	guard.Sort(r.d.Trips)
	r.d.Warnings = append(r.d.Warnings, w.Warnings...)
	r.noteBox()
	for _, t := range r.tags {
		t.windowFigures(w)
	}
}

// startBarrier is a concurrent group's start instant: every part (each
// fleet, and this process) arrives with the earliest instant it can start
// at, and all leave with the latest of them (a fleet launched with a fixed
// instant imposes it). A part that fails before it arrives releases the
// others with its error.
type startBarrier struct {
	ctx     context.Context
	mu      sync.Mutex
	parts   int
	arrived int
	at      time.Time
	fixed   bool
	err     error
	done    chan struct{}
}

func newStartBarrier(ctx context.Context) *startBarrier {
	return &startBarrier{ctx: ctx, done: make(chan struct{})}
}

// barrierPart is one part of a group's start.
type barrierPart struct {
	b    *startBarrier
	once sync.Once
}

// join adds a part; every part joins before any arrives.
func (b *startBarrier) join() *barrierPart {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parts++
	return &barrierPart{b: b}
}

// arrive waits for every part and returns the group's start instant.
func (p *barrierPart) arrive(earliest time.Time, fixed bool) (time.Time, error) {
	b := p.b
	p.once.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch {
		case fixed && b.fixed && !earliest.Equal(b.at):
			b.fail(fmt.Errorf("two fleets were launched with different start instants (%s apart)", earliest.Sub(b.at).Abs()))
		case fixed:
			if !b.at.IsZero() && earliest.Before(b.at) {
				b.fail(fmt.Errorf("a fleet launched with its start instant would start %s before the others can", b.at.Sub(earliest)))
			}
			b.at, b.fixed = earliest, true
		case b.fixed && b.at.Before(earliest):
			b.fail(fmt.Errorf("a fleet launched with its start instant would start %s before the others can", earliest.Sub(b.at)))
		case !b.fixed && earliest.After(b.at):
			b.at = earliest
		}
		b.count()
	})
	select {
	case <-b.done:
	case <-b.ctx.Done():
		return time.Time{}, b.ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.at, b.err
}

// leave releases the others when the part ends without having arrived.
func (p *barrierPart) leave(err error) {
	p.once.Do(func() {
		b := p.b
		b.mu.Lock()
		defer b.mu.Unlock()
		if err == nil {
			err = fmt.Errorf("a fleet ended before it could start")
		}
		b.fail(err)
		b.count()
	})
}

// fail keeps the first error; called with mu held.
func (b *startBarrier) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// count counts a part in; called with mu held.
func (b *startBarrier) count() {
	if b.arrived++; b.arrived == b.parts {
		close(b.done)
	}
}

// groupObservers are the group's observers: its own and every scenario's
// observe list, the box, and the run guards of every started target, each
// fatal where any scenario sends it traffic.
func groupObservers(th *starlark.Thread, name string, observe *starlark.List, loads []*load) ([]loadgen.Observer, error) {
	var vals []starlark.Value
	add := func(l *starlark.List) {
		if l == nil {
			return
		}
		for v := range starlark.Elements(l) {
			if !slices.ContainsFunc(vals, func(x starlark.Value) bool { return x == v }) {
				vals = append(vals, v)
			}
		}
	}
	add(observe)
	var dests []*guard.Dest
	for _, l := range loads {
		add(l.la.observe)
		dests = append(dests, l.dest)
	}
	list := starlark.NewList(vals)
	obs, err := observers(name, list)
	if err != nil {
		return nil, err
	}
	return withTargetGuards(th, withBox(th, obs, list), dests...), nil
}

// noteGroupFigures gives a scenario's run its own statement figures where
// the server tells the scenarios apart (parts: each scenario's statements),
// and says which of the others are the whole group's.
func noteGroupFigures(runs []*Run, names []string, stmts []handle.Statement, parts map[string][][]string) {
	own := attributed(stmts, parts)
	for i, r := range runs {
		r.ownFigures(own[names[i]], fmt.Sprintf("per request of every scenario's requests over the shared window, not scenario %q's alone", names[i]))
	}
}

// mergeScenarios is the group's merged run: every scenario's requests in
// one account and one set of histograms, the window's figures once, and
// the scenarios' runs as its tags.
func mergeScenarios(label string, names []string, runs []*Run, t groupTiming) *Run {
	all := loadgen.NewResult()
	spec := loadgen.Spec{Label: label, Window: t.window, Duration: t.duration}
	for _, r := range runs {
		own := *r.d.Result
		own.Tags, own.Trips, own.Warnings, own.Observed = nil, nil, nil, nil
		all.Merge(&own, 0)
		all.Trips = append(all.Trips, r.d.Trips...)
	}
	all.Trips = uniqueTrips(all.Trips)
	all.WindowFigures(t.window, t.duration)
	all.Measured, all.Observed, all.LateObservers = runs[0].d.Measured, runs[0].d.Observed, runs[0].d.LateObservers
	all.Warnings = groupWarnings(names, runs)
	for _, l := range runs {
		spec.Clients += l.d.Clients
		spec.Rate += l.d.Rate
	}
	if spec.Label == "" {
		spec.Label = strings.Join(names, " + ")
	}
	run := newRun("concurrent", spec, all)
	run.d.Warnings = uniqueStrings(run.d.Warnings) // noteBox repeats the window's busy box
	run.d.WarmupS = t.warmup.Seconds()
	run.tags = map[string]*Run{}
	for i, r := range runs {
		r.parent = run
		run.tags[names[i]] = r
	}
	return run
}

// groupWarnings are the scenarios' warnings for the merged run: one that
// every scenario has (the window's: a guard, an observer, the generator's
// CPU) once, the others named by their scenario.
func groupWarnings(names []string, runs []*Run) []string {
	var out []string
	for i, r := range runs {
		for _, w := range r.d.Warnings {
			everywhere := true
			for _, o := range runs {
				everywhere = everywhere && slices.Contains(o.d.Warnings, w)
			}
			if !everywhere {
				w = names[i] + ": " + w
			}
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// uniqueStrings is ss without repeats, in order.
func uniqueStrings(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// uniqueTrips are trips without repeats (the window's, which every
// scenario has).
func uniqueTrips(trips []guard.Trip) []guard.Trip {
	var out []guard.Trip
	for _, t := range trips {
		if !slices.ContainsFunc(out, func(o guard.Trip) bool { return reflect.DeepEqual(o, t) }) {
			out = append(out, t)
		}
	}
	guard.Sort(out)
	return out
}

// Scenarios is what workload.concurrent returns: a dict of the scenarios'
// runs by name, in the order given, with .all, the merged run.
type Scenarios struct {
	names []string
	all   *Run
}

var (
	_ starlark.IterableMapping = (*Scenarios)(nil)
	_ starlark.HasAttrs        = (*Scenarios)(nil)
	_ starlark.Comparable      = (*Scenarios)(nil)
	_ codec.Marshaler          = (*Scenarios)(nil)
)

func (s *Scenarios) String() string {
	parts := make([]string, len(s.names))
	for i, n := range s.names {
		parts[i] = fmt.Sprintf("%q: %s", n, s.all.tags[n])
	}
	return "scenarios({" + strings.Join(parts, ", ") + "})"
}
func (s *Scenarios) Type() string          { return "scenarios" }
func (s *Scenarios) Freeze()               {}
func (s *Scenarios) Truth() starlark.Bool  { return true }
func (s *Scenarios) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: scenarios") }
func (s *Scenarios) Len() int              { return len(s.names) }

func (s *Scenarios) Get(k starlark.Value) (starlark.Value, bool, error) {
	n, ok := starlark.AsString(k)
	if !ok {
		return nil, false, fmt.Errorf("scenarios: a scenario's name is a string, got %s", k.Type())
	}
	r, found := s.all.tags[n]
	if !found {
		return nil, false, nil
	}
	return r, true, nil
}

func (s *Scenarios) Iterate() starlark.Iterator { return s.keys().Iterate() }

func (s *Scenarios) keys() *starlark.List {
	l := make([]starlark.Value, len(s.names))
	for i, n := range s.names {
		l[i] = starlark.String(n)
	}
	return starlark.NewList(l)
}

func (s *Scenarios) Items() []starlark.Tuple {
	out := make([]starlark.Tuple, len(s.names))
	for i, n := range s.names {
		out[i] = starlark.Tuple{starlark.String(n), s.all.tags[n]}
	}
	return out
}

func (s *Scenarios) AttrNames() []string { return []string{"all", "items", "keys", "values"} }

func (s *Scenarios) Attr(name string) (starlark.Value, error) {
	method := func(f func() starlark.Value) starlark.Value {
		return starlark.NewBuiltin("scenarios."+name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			return f(), nil
		})
	}
	switch name {
	case "all":
		return s.all, nil
	case "keys":
		return method(func() starlark.Value { return s.keys() }), nil
	case "values":
		return method(func() starlark.Value {
			l := make([]starlark.Value, len(s.names))
			for i, n := range s.names {
				l[i] = s.all.tags[n]
			}
			return starlark.NewList(l)
		}), nil
	case "items":
		return method(func() starlark.Value {
			l := make([]starlark.Value, len(s.names))
			for i, kv := range s.Items() {
				l[i] = kv
			}
			return starlark.NewList(l)
		}), nil
	}
	return nil, nil
}

// CompareSameType: two groups are equal when their merged runs are.
func (s *Scenarios) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	o := y.(*Scenarios)
	if op != syntax.EQL && op != syntax.NEQ {
		return false, fmt.Errorf("scenarios support only == and !=")
	}
	eq := slices.Equal(s.names, o.names)
	if eq {
		var err error
		if eq, err = starlark.EqualDepth(s.all, o.all, depth-1); err != nil {
			return false, err
		}
	}
	return eq == (op == syntax.EQL), nil
}

// Markdown and HTML show the merged run, its per-scenario table first.
func (s *Scenarios) Markdown() string { return s.all.Markdown() }
func (s *Scenarios) HTML() string     { return s.all.HTML() }

// JSON is the merged run's, its scenarios under by_tag.
func (s *Scenarios) JSON() any { return s.all.JSON() }

// scenariosStored is how the cache keeps a group: the order of its
// scenarios and its merged run (whose tags are their runs).
type scenariosStored struct {
	Names []string        `json:"names"`
	All   json.RawMessage `json:"all"`
}

func (s *Scenarios) MarshalValue() ([]byte, error) {
	b, err := s.all.MarshalValue()
	if err != nil {
		return nil, err
	}
	return json.Marshal(scenariosStored{Names: s.names, All: b})
}

func decodeScenarios(data []byte, _ codec.Types) (starlark.Value, error) {
	var st scenariosStored
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	v, err := decodeRun(st.All, nil)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	return &Scenarios{names: st.Names, all: v.(*Run)}, nil
}
