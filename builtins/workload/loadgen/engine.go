package loadgen

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// client sends requests of one kind over its own connection. One client
// belongs to one worker goroutine; only abort may be called from another.
type client interface {
	// do sends one request and waits for its response until its
	// deadline; it returns the error class, "" on success.
	do(ctx context.Context, req request) string
	stopper
}

// stopper is what the engine needs of every worker's client or loop.
type stopper interface {
	// abort unblocks a request in flight (Ctrl-C); safe from any goroutine.
	abort()
	close()
}

// multiplexed is a target whose closed loop drives many clients from one
// goroutine (sql and plain http on Linux, as pgbench and wrk do); the engine
// runs such loops, one per P but one, instead of a goroutine per client.
// newLoop returns nil when this target cannot be multiplexed.
type multiplexed interface {
	newLoop(clients int) loop
}

// loop drives its share of a closed loop's clients until the run ends,
// recording into rec exactly as closedWorker does.
type loop interface {
	run(r *engine, rec *recorder)
	stopper
}

// request is one request as the engine hands it to a client.
type request struct {
	seq      int64     // sequence number, for generators
	deadline time.Time // give up then (timeout, bounded by the run's hard end)
	measured bool      // inside the measurement window (not warmup)
}

// Target makes clients; each worker gets its own. NewHTTPTarget and
// OpenSQL make the two kinds.
type Target interface {
	newClient() client
}

var (
	_ Target = (*HTTPTarget)(nil)
	_ Target = (*SQLTarget)(nil)
	_ client = (*httpClient)(nil)
	_ client = (*sqlClient)(nil)
)

// Spec is what every load kind shares: the loop's shape and its timing.
// Its plain fields travel as JSON (for agents that run one spec each).
type Spec struct {
	Clients     int           `json:"clients,omitempty"`      // closed loop: clients (users), back to back unless they think
	Think       time.Duration `json:"think,omitempty"`        // closed loop: each user's think time between an outcome and its next request (think.go)
	ThinkExp    bool          `json:"think_exp,omitempty"`    // closed loop: think times exponential with mean Think (seeded), not constant
	Rate        float64       `json:"rate,omitempty"`         // open loop (Clients == 0): requests per second
	Arrival     string        `json:"arrival,omitempty"`      // open loop: "constant" or "poisson" (seeded)
	MaxInflight int           `json:"max_inflight,omitempty"` // open loop: bound on requests in flight
	Tick        time.Duration `json:"tick,omitempty"`         // open loop: wake once per Tick to send what is due (0: at each intended start)
	TickAuto    bool          `json:"tick_auto,omitempty"`    // open loop: Tick from the rate instead (see AutoTick)
	Duration    time.Duration `json:"duration"`               // the measurement window
	Warmup      time.Duration `json:"warmup"`                 // before it: sent, not measured
	Window      time.Duration `json:"window"`                 // length of each per-window figure
	Timeout     time.Duration `json:"timeout"`                // per request, from its send
	Label       string        `json:"label"`                  // names the run on the progress line
	Step        string        `json:"-"`                      // the experiment's step before it ("pair 2/4 B")
	// SeqBase is the first open-loop request number, and seeds the Poisson
	// pacer: a fleet gives each agent its own range (closed-loop clients
	// number their requests from 0 each).
	SeqBase   int64      `json:"seq_base,omitempty"`
	Progress  io.Writer  `json:"-"` // the live progress line; nil for none
	Terminal  bool       `json:"-"` // Progress is a terminal: rewrite one line
	Observers []Observer `json:"-"` // server-side figures around the window
}

// lateAfter is the dispatch lag past which an open-loop request counts as
// late: it was sent noticeably after its intended start.
const lateAfter = 10 * time.Millisecond

// engine is one execution of Run.
type engine struct {
	spec      Spec
	tgt       Target
	ctx       context.Context // cancelled by Ctrl-C
	loadCtx   context.Context // also ends at the hard end (duration + timeout)
	start     time.Time
	measureAt time.Time
	end       time.Time
	hardEnd   time.Time
	shared    *windows

	mu      sync.Mutex
	recs    []*recorder
	clients []stopper
	wg      sync.WaitGroup

	scheds  []*schedule   // open loop: one per event loop, or the workers' one
	tick    time.Duration // open loop: Spec.Tick, or AutoTick's choice for it
	loops   int           // open loop: event loops started (none: workers)
	workers int           // open loop's workers; guarded by mu

	stopOnce sync.Once
	stopAt   time.Time // when Ctrl-C was first seen; set by stopTime

	self selfStats // the generator's own cost over the window; set by measure

	users userStats // closed loop with think time: the users' starts (think.go)

	prepared Prepared // the observers Run readied before the clock started (nil: none)
}

// stopTime is the moment the run was interrupted: fixed by whoever first
// sees the cancelled context, so every worker (and the final count) splits
// the schedule at the same instant: requests due before it were intended
// and are undecided if nothing decided them; later ones were not intended.
func (r *engine) stopTime() time.Time {
	r.stopOnce.Do(func() { r.stopAt = time.Now() })
	return r.stopAt
}

// Run drives tgt according to spec until the duration is over or ctx is
// cancelled, and returns what was measured.
//
// The observers' slow part (a connection each) is done before the clock
// starts: a run without warmup opens their windows and guards with its
// first requests, not a connection later.
func Run(ctx context.Context, spec Spec, tgt Target) *Result {
	prepared := Prepare(ctx, spec.Observers)
	r := newEngine(ctx, spec, tgt)
	r.prepared = prepared
	return r.run()
}

func newEngine(ctx context.Context, spec Spec, tgt Target) *engine {
	now := time.Now()
	r := &engine{spec: spec, tgt: tgt, ctx: ctx, start: now, shared: &windows{},
		measureAt: now.Add(spec.Warmup), end: now.Add(spec.Warmup + spec.Duration)}
	r.hardEnd = r.end.Add(spec.Timeout)
	r.tick = spec.Tick
	if spec.TickAuto && spec.Clients == 0 {
		r.tick = AutoTick(spec.Rate / float64(openLoops(spec)))
	}
	return r
}

func (r *engine) run() *Result {
	spec := r.spec
	// Without a warmup the window opens with the first request: the
	// guards and observers open before the load starts, or the server's
	// log lines of the first few requests (counted measured) would come
	// before the guard's offset (3 ERROR lines short of 210 failed requests
	// at load, with the watch opened after the dispatch had started). The
	// window then starts when they are open, so that its duration is all
	// load.
	var early *openedWindow
	if !r.measureAt.After(time.Now()) {
		early = r.openWindow()
		d := time.Since(r.measureAt)
		r.start, r.measureAt, r.end, r.hardEnd = r.start.Add(d), r.measureAt.Add(d), r.end.Add(d), r.hardEnd.Add(d)
	}
	var cancel context.CancelFunc
	r.loadCtx, cancel = context.WithDeadline(r.ctx, r.hardEnd)
	defer cancel()
	stopAbort := context.AfterFunc(r.ctx, func() { r.stopTime(); r.abortAll() })
	defer stopAbort()
	prog := startProgress(r)
	dispatchDone := make(chan struct{})
	go func() {
		defer close(dispatchDone)
		if spec.Clients > 0 {
			r.closedLoop()
		} else {
			r.openLoop()
		}
	}()
	res := r.measure(early)
	<-dispatchDone
	r.wg.Wait()
	prog.stop()
	r.closeAll()
	return r.collect(res)
}

// openedWindow is an opened measurement window: the generator's own figures at its
// start, and the guards' and observers' watch.
type openedWindow struct {
	before selfSnapshot
	w      *Watch
}

func (r *engine) openWindow() *openedWindow {
	before := takeSelf()
	return &openedWindow{before, StartWatch(r.ctx, r.spec.Observers, r.prepared, r.measureAt, true, r.successes)}
}

// measure waits through warmup and the measurement window, taking the
// generator's and the observers' figures at both ends; open is the window
// when it was opened before the load started.
func (r *engine) measure(open *openedWindow) *Result {
	res := &Result{}
	defer r.prepared.Cancel()
	if !SleepUntil(r.ctx, r.measureAt) {
		if open != nil {
			open.w.Stop(0)
		}
		res.Interrupted = true
		return res
	}
	if open == nil {
		open = r.openWindow()
	}
	before, w := open.before, open.w
	res.Interrupted = !SleepUntil(r.ctx, r.end)
	res.Measured = time.Since(r.measureAt)
	if res.Measured > r.spec.Duration {
		res.Measured = r.spec.Duration
	}
	r.self = takeSelf().since(before, res.Measured)
	res.CPU, res.GCPause = r.self.cpu, r.self.gcPause
	var warnings []string
	res.Observed, res.Trips, warnings = w.Stop(r.successes())
	res.Warnings = append(append(res.Warnings, warnings...), TripWarnings(res.Trips)...)
	return res
}

// SleepUntil waits until t; false if ctx ended first (true at once for a
// t already past, unless ctx has ended).
func SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// window returns the index of the measurement window holding t, -1 in warmup.
func (r *engine) windowOf(t time.Time) int {
	d := t.Sub(r.measureAt)
	if d < 0 {
		return -1
	}
	return int(d / r.spec.Window)
}

func (r *engine) inMeasurement(t time.Time) bool { return !t.Before(r.measureAt) && t.Before(r.end) }

// newWorker registers a client and a recorder for a new worker. Open-loop
// workers share recorders once there are many, bounding memory.
func (r *engine) newWorker() (client, *recorder) {
	c := r.tgt.newClient()
	return c, r.register(c)
}

// register adds a worker's client or loop, so Ctrl-C reaches it, and
// returns the recorder it records into.
func (r *engine) register(s stopper) *recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients = append(r.clients, s)
	if len(r.recs) < maxRecorders {
		r.recs = append(r.recs, newRecorder(r.shared))
	}
	return r.recs[(len(r.clients)-1)%len(r.recs)]
}

const maxRecorders = 64

func (r *engine) abortAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		c.abort()
	}
}

func (r *engine) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		c.close()
	}
}

func (r *engine) deadline(t time.Time) time.Time {
	d := t.Add(r.spec.Timeout)
	if d.After(r.hardEnd) {
		return r.hardEnd
	}
	return d
}

// closedLoop runs spec.Clients workers back to back: a goroutine each, or
// loops of many clients each where the target can multiplex them.
func (r *engine) closedLoop() {
	if m, ok := r.tgt.(multiplexed); ok {
		// A loop holds its P while it waits in epoll_wait, so one P is left
		// for the rest of the process (progress, timers, GC); on a 2-core box
		// that also leaves the target a core, as wrk -t1 and pgbench -j 1 do.
		n := min(max(runtime.GOMAXPROCS(0)-1, 1), r.spec.Clients)
		for i := range n {
			l := m.newLoop(r.spec.Clients/n + btoi(i < r.spec.Clients%n))
			if l == nil {
				break // this target cannot (https): a goroutine per client
			}
			rec := r.register(l)
			r.wg.Go(func() { l.run(r, rec) })
			if i == n-1 {
				return
			}
		}
	}
	for range r.spec.Clients {
		c, rec := r.newWorker()
		r.wg.Go(func() { r.closedWorker(c, rec) })
	}
}

// finished records a closed-loop request from t0 to end, as closedWorker
// does: warmup counts only for progress, a request Ctrl-C cut short as
// undecided.
func (r *engine) finished(rec *recorder, t0, end time.Time, measured bool, class string) {
	if r.ctx.Err() != nil {
		if measured {
			rec.undecide()
		}
		return
	}
	if !measured {
		rec.warm.Add(1)
		return
	}
	lat := end.Sub(t0)
	rec.record(lat, lat, class, r.windowOf(t0))
}

func (r *engine) closedWorker(c client, rec *recorder) {
	var u user
	for seq := int64(0); ; seq++ {
		if r.thinking() && !r.waitUser(&u) {
			return
		}
		t0 := time.Now()
		if !t0.Before(r.end) || r.ctx.Err() != nil {
			return
		}
		if r.thinking() {
			r.userStarts(rec, &u, t0)
		}
		class := c.do(r.loadCtx, request{seq: seq, deadline: r.deadline(t0), measured: !t0.Before(r.measureAt)})
		end := time.Now()
		r.finished(rec, t0, end, !t0.Before(r.measureAt), class)
		if r.thinking() {
			u.thinkFrom(end)
		}
	}
}

// collect merges the recorders into the result.
func (r *engine) collect(res *Result) *Result {
	res.Hist, res.OK, res.Service, res.Lag = NewHist(), NewHist(), NewHist(), NewHist()
	res.Errors = map[string]int64{}
	if r.ctx.Err() != nil {
		for _, s := range r.scheds {
			s.abandon(r, r.recs[0])
		}
	}
	for _, rec := range r.recs {
		rec.flush()
		res.Hist.Merge(rec.hist)
		res.OK.Merge(rec.ok)
		res.Service.Merge(rec.service)
		res.Lag.Merge(rec.lag)
		res.Late += rec.late
		res.After += rec.after.Load()
		res.Dropped += rec.dropped
		res.Undecided += rec.undecided
		for k, v := range rec.errors {
			res.Errors[k] += v
		}
	}
	res.Count = res.OK.TotalCount()
	res.Tick = r.tick
	r.collectUsers(res)
	res.Intended = res.Count + SumErrors(res.Errors) + res.Dropped + res.Undecided
	if len(r.scheds) > 0 {
		res.Intended = r.intended()
	}
	if r.ctx.Err() != nil {
		res.Interrupted = true
	}
	if got := res.Count + SumErrors(res.Errors) + res.Dropped + res.Undecided; got != res.Intended {
		// Cannot happen: said out loud rather than trusted if it does.
		res.Warnings = append(res.Warnings, fmt.Sprintf("accounting: %d requests intended, %d accounted for (a generator bug)", res.Intended, got))
	}
	r.shared.mu.Lock()
	res.Windows, res.WindowHists = windowCounts(r.shared, r.spec)
	r.shared.mu.Unlock()
	res.WindowFigures(r.spec.Window, r.spec.Duration)
	res.Warnings = append(res.Warnings, r.self.warnings(r.spec, res)...)
	if failed := SumErrors(res.Errors) + res.Dropped; failed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the percentiles count %d failed or dropped requests as lower bounds "+
			"(from the intended start to the failure or give-up): run.ok_p(q) has the %d successes alone", failed, res.Count))
	}
	if res.Interrupted {
		res.Warnings = append(res.Warnings, fmt.Sprintf("interrupted: figures cover only what was measured before Ctrl-C (%d requests undecided)", res.Undecided))
	}
	return res
}

// windowCounts are the measurement window's per-window counts and
// histograms as the recorders folded them; Result.WindowFigures derives
// the rest.
func windowCounts(w *windows, spec Spec) ([]Window, []*hdrhistogram.Histogram) {
	n := int((spec.Duration + spec.Window - 1) / spec.Window)
	n = max(n, len(w.hist))
	out := make([]Window, n)
	for i := range out {
		out[i].Errors = map[string]int64{}
		if i < len(w.hist) {
			out[i].Count, out[i].Errors = w.ok[i], w.errs[i]
		}
	}
	return out, append([]*hdrhistogram.Histogram(nil), w.hist...)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
