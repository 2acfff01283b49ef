package loadgen

import (
	"context"
	"math"
	"slices"
	"time"
)

// Scenario is one load of a concurrent run: its loop (clients or rate),
// timeout, window, label and progress line in Spec, and its target. Its
// warm-up and duration are the group's; its Spec.Observers are unused
// (RunConcurrent's watch the window for all).
type Scenario struct {
	Spec   Spec
	Target Target
}

// RunConcurrent runs every scenario from one instant (at; zero for now),
// through one warm-up and one measurement window, the first scenario's
// Warmup and Duration: k6's scenarios, Gatling's injection profiles side by
// side. The observers and the run guards watch that window once, for all
// of them: each result has the window's figures (the observers' per
// request of all the scenarios' successes, the trips, the generator's CPU
// and GC shared out by decided requests), beside its own counts. Ctrl-C
// stops every scenario at once, and each keeps what it measured. Run is
// RunConcurrent of one scenario.
func RunConcurrent(ctx context.Context, observers []Observer, scenarios []Scenario, at time.Time) []*Result {
	prepared := Prepare(ctx, observers)
	g := &group{ctx: ctx, observers: observers, prepared: prepared}
	var early *openedWindow
	if !at.IsZero() {
		// A start instant given ahead (a group with fleets, whose agents
		// start at it): a window that opens with the load opens before
		// it, so that every part starts at the instant itself.
		if scenarios[0].Spec.Warmup == 0 {
			g.measureAt = at
			early = g.openWindow()
		}
		if !SleepUntil(ctx, at) {
			if early != nil {
				early.w.Stop(0)
			}
			prepared.Cancel()
			out := make([]*Result, len(scenarios))
			for i := range out {
				out[i] = NewResult()
				out[i].Interrupted = true
			}
			return out
		}
	} else {
		at = time.Now()
	}
	for _, sc := range scenarios {
		spec := sc.Spec
		spec.Warmup, spec.Duration = scenarios[0].Spec.Warmup, scenarios[0].Spec.Duration
		g.engines = append(g.engines, newEngineAt(ctx, spec, sc.Target, at))
	}
	return g.run(early)
}

// group is one execution of RunConcurrent: engines that share a clock (the
// same start, measurement window and end) and one watch of the window.
type group struct {
	ctx       context.Context
	engines   []*engine
	observers []Observer
	prepared  Prepared  // readied before the clock started (nil: none)
	measureAt time.Time // when the window opens (the engines')
}

// run runs the engines; early is the window if it was opened before them.
func (g *group) run(early *openedWindow) []*Result {
	first := g.engines[0]
	g.measureAt = first.measureAt
	// Without a warmup the window opens with the first request: the
	// guards and observers open before the load starts, or the server's
	// log lines of the first few requests (counted measured) would come
	// before the guard's offset (3 ERROR lines short of 210 failed requests
	// at load, with the watch opened after the dispatch had started). The
	// window then starts when they are open, so that its duration is all
	// load.
	if early == nil && !first.measureAt.After(time.Now()) {
		early = g.openWindow()
		d := time.Since(first.measureAt)
		for _, r := range g.engines {
			r.start, r.measureAt, r.end, r.hardEnd = r.start.Add(d), r.measureAt.Add(d), r.end.Add(d), r.hardEnd.Add(d)
		}
		g.measureAt = first.measureAt
	}
	dispatched := make([]chan struct{}, len(g.engines))
	progs := make([]*progress, len(g.engines))
	for i, r := range g.engines {
		var cancel context.CancelFunc
		r.loadCtx, cancel = context.WithDeadline(r.ctx, r.hardEnd)
		defer cancel()
		stopAbort := context.AfterFunc(r.ctx, func() { r.stopTime(); r.abortAll() })
		defer stopAbort()
		progs[i] = startProgress(r)
		dispatched[i] = make(chan struct{})
		go func() {
			defer close(dispatched[i])
			if r.spec.Clients > 0 {
				r.closedLoop()
			} else {
				r.openLoop()
			}
		}()
	}
	res := g.measure(early)
	out := make([]*Result, len(g.engines))
	for i, r := range g.engines {
		<-dispatched[i]
		r.wg.Wait()
		progs[i].stop()
		r.closeAll()
	}
	for i, r := range g.engines {
		own := *res
		own.Warnings = slices.Clone(res.Warnings)
		out[i] = r.collect(&own)
	}
	if len(out) > 1 {
		shareCPU(out, res)
	}
	return out
}

// shareCPU gives each scenario the generator's CPU and GC pauses by its
// share of the decided requests (each collected the whole window's).
func shareCPU(out []*Result, window *Result) {
	var all float64
	for _, r := range out {
		all += float64(r.Count + SumErrors(r.Errors))
	}
	for _, r := range out {
		share := 0.0
		if all > 0 {
			share = float64(r.Count+SumErrors(r.Errors)) / all
		}
		r.CPU = time.Duration(math.Round(float64(window.CPU) * share))
		r.GCPause = time.Duration(math.Round(float64(window.GCPause) * share))
		for _, t := range r.Tags {
			if d := float64(r.Count + SumErrors(r.Errors)); d > 0 {
				f := float64(t.Count+SumErrors(t.Errors)) / d
				t.CPU = time.Duration(math.Round(float64(r.CPU) * f))
				t.GCPause = time.Duration(math.Round(float64(r.GCPause) * f))
			}
		}
	}
}

// openedWindow is an opened measurement window: the generator's own
// figures at its start, and the guards' and observers' watch.
type openedWindow struct {
	before selfSnapshot
	w      *Watch
}

func (g *group) openWindow() *openedWindow {
	before := takeSelf()
	return &openedWindow{before, StartWatch(g.ctx, g.observers, g.prepared, g.measureAt, true, g.successes)}
}

// successes counts the measured successful requests of every scenario.
func (g *group) successes() int64 {
	var n int64
	for _, r := range g.engines {
		n += r.successes()
	}
	return n
}

// measure waits through warmup and the measurement window, taking the
// generator's and the observers' figures at both ends; open is the window
// when it was opened before the load started.
func (g *group) measure(open *openedWindow) *Result {
	r := g.engines[0]
	res := &Result{}
	defer g.prepared.Cancel()
	if !SleepUntil(g.ctx, r.measureAt) {
		if open != nil {
			open.w.Stop(0)
		}
		res.Interrupted = true
		return res
	}
	if open == nil {
		open = g.openWindow()
	}
	before, w := open.before, open.w
	res.Interrupted = !SleepUntil(g.ctx, r.end)
	res.Measured = time.Since(r.measureAt)
	if res.Measured > r.spec.Duration {
		res.Measured = r.spec.Duration
	}
	self := takeSelf().since(before, res.Measured)
	for _, e := range g.engines {
		e.self = self
	}
	res.CPU, res.GCPause = self.cpu, self.gcPause
	var warnings []string
	res.Observed, res.Trips, warnings = w.Stop(g.successes())
	res.LateObservers = w.Late()
	res.Warnings = append(append(res.Warnings, warnings...), TripWarnings(res.Trips)...)
	return res
}
