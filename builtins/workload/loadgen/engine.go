package loadgen

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Client sends requests of one kind over its own connection. One Client
// belongs to one worker goroutine; only abort may be called from another.
type Client interface {
	// Do sends one request and waits for its response until its
	// deadline; it returns the error class, "" on success, and the
	// request's tag ("" in an untagged run).
	Do(ctx context.Context, req Request) (class, tag string)
	Stopper
}

// Maker is a client whose request a generator may make: Make makes the
// next one (the next Do sends it) and returns its tag, so that a closed
// loop's worker starts the request's clock after the generator. A request
// Make could not make (a generator error) is still Do's to count: Do
// returns its class (ClassGenerator) and tag without sending.
type Maker interface {
	Make(req Request) (tag string)
}

// Stopper is what the engine needs of every worker's client or loop.
type Stopper interface {
	// Abort unblocks a request in flight (Ctrl-C); safe from any goroutine.
	Abort()
	Close()
}

// Multiplexed is a target whose closed loop drives many clients from one
// goroutine (sql and plain http on Linux, as pgbench and wrk do); the engine
// runs such loops, one per P but one, instead of a goroutine per client.
// NewLoop returns nil when this target cannot be multiplexed (then each
// client is a goroutine's: https, SQL over TLS). On Linux a loop embeds
// LoopBase and drives its clients through it (drive_linux.go).
type Multiplexed interface {
	NewLoop(clients int) Loop
}

// Loop drives its share of a closed loop's clients until the run ends,
// recording each outcome as closedWorker does (LoopBase.DriveClosed). The
// engine registers it as a Stopper: Abort wakes it to see the run's end,
// Close (after RunClosed returned) releases its connections.
type Loop interface {
	RunClosed(run LoopRun)
	Stopper
}

// LoopRun is what the engine hands a loop it starts: the run, the
// recorder the loop records into and, in an open loop, its share of the
// schedule. A loop passes it on to LoopBase.DriveClosed or DriveOpen.
type LoopRun struct {
	r     *engine
	rec   *recorder
	sched *schedule // open loop only
}

// Request is one Request as the engine hands it to a client.
type Request struct {
	Seq      int64     // sequence number, for generators
	Stream   int64     // closed loop: the client's own, for a mix's draw (Mix); 0 in an open loop
	Deadline time.Time // give up then (timeout, bounded by the run's hard end)
	Measured bool      // inside the measurement window (not warmup)
}

// Target makes clients; each worker gets its own. The wire protocols'
// packages make them (h1wire.NewHTTPTarget, pgwire.OpenSQL,
// mongowire.OpenMongo).
type Target interface {
	NewClient() Client
}

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
	clients []Stopper
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

	tags *tagTable // a tagged target's recorders by tag; nil: untagged
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
	return RunConcurrent(ctx, spec.Observers, []Scenario{{Spec: spec, Target: tgt}}, time.Time{})[0]
}

func newEngine(ctx context.Context, spec Spec, tgt Target) *engine {
	return newEngineAt(ctx, spec, tgt, time.Now())
}

// newEngineAt is an engine whose run starts at now.
func newEngineAt(ctx context.Context, spec Spec, tgt Target, now time.Time) *engine {
	r := &engine{spec: spec, tgt: tgt, ctx: ctx, start: now, shared: &windows{},
		measureAt: now.Add(spec.Warmup), end: now.Add(spec.Warmup + spec.Duration)}
	r.hardEnd = r.end.Add(spec.Timeout)
	r.tick = spec.Tick
	if spec.TickAuto && spec.Clients == 0 {
		r.tick = AutoTick(spec.Rate / float64(openLoops(spec)))
	}
	if t, ok := tgt.(Tagged); ok && t.Tags() != nil {
		r.tags = newTagTable(t.Tags())
	}
	return r
}

// run is the engine's run alone (its spec's observers, readied by Run).
func (r *engine) run() *Result {
	g := &group{ctx: r.ctx, engines: []*engine{r}, observers: r.spec.Observers, prepared: r.prepared}
	return g.run(nil)[0]
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
func (r *engine) newWorker() (Client, *recorder) {
	c := r.tgt.NewClient()
	return c, r.register(c)
}

// register adds a worker's client or loop, so Ctrl-C reaches it, and
// returns the recorder it records into.
func (r *engine) register(s Stopper) *recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients = append(r.clients, s)
	if len(r.recs) < maxRecorders {
		rec := newRecorder(r.shared)
		rec.tags = r.tags
		r.recs = append(r.recs, rec)
	}
	return r.recs[(len(r.clients)-1)%len(r.recs)]
}

const maxRecorders = 64

func (r *engine) abortAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		c.Abort()
	}
}

func (r *engine) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		c.Close()
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
//
// Each client draws its mix (Mix) from its own stream, numbered from
// SeqBase + 1 so that a fleet's agents draw from streams of their own.
func (r *engine) closedLoop() {
	stream := r.spec.SeqBase + 1
	if m, ok := r.tgt.(Multiplexed); ok {
		// A loop holds its P while it waits in epoll_wait, so one P is left
		// for the rest of the process (progress, timers, GC); on a 2-core box
		// that also leaves the target a core, as wrk -t1 and pgbench -j 1 do.
		n := min(max(runtime.GOMAXPROCS(0)-1, 1), r.spec.Clients)
		for i := range n {
			k := r.spec.Clients/n + btoi(i < r.spec.Clients%n)
			l := m.NewLoop(k)
			if l == nil {
				break // this target cannot (https): a goroutine per client
			}
			if s, ok := l.(streamed); ok {
				s.setStreams(stream)
			}
			stream += int64(k)
			rec := r.register(l)
			r.wg.Go(func() { l.RunClosed(LoopRun{r: r, rec: rec}) })
			if i == n-1 {
				return
			}
		}
	}
	for i := range r.spec.Clients {
		c, rec := r.newWorker()
		r.wg.Go(func() { r.closedWorker(c, rec, stream+int64(i)) })
	}
}

// streamed is a loop whose clients draw a mix: client i of it from stream
// base + i.
type streamed interface{ setStreams(base int64) }

// finished records a closed-loop request of tag from t0 to end, as
// closedWorker does: warmup counts only for progress, a request Ctrl-C cut
// short as undecided.
func (r *engine) finished(rec *recorder, t0, end time.Time, measured bool, class, tag string) {
	if r.ctx.Err() != nil {
		if measured {
			rec.undecide(tag)
		}
		return
	}
	if !measured {
		rec.warm.Add(1)
		return
	}
	lat := end.Sub(t0)
	rec.record(lat, lat, class, r.windowOf(t0), tag)
}

func (r *engine) closedWorker(c Client, rec *recorder, stream int64) {
	var u user
	for seq := int64(0); ; seq++ {
		if r.thinking() && !r.waitUser(&u) {
			return
		}
		t0 := time.Now()
		if !t0.Before(r.end) || r.ctx.Err() != nil {
			return
		}
		req, tag := Request{Seq: seq, Stream: stream}, ""
		if m, ok := c.(Maker); ok {
			// The request starts once made: the generator's time (and
			// its wait for another's, one call at a time) is not the
			// target's, and a user waiting for it sent late.
			tag = m.Make(req)
			if t0 = time.Now(); !t0.Before(r.end) || r.ctx.Err() != nil {
				return // made after the run's end: not started
			}
		}
		if r.thinking() {
			r.userStarts(rec, &u, t0, tag)
		}
		req.Deadline, req.Measured = r.deadline(t0), !t0.Before(r.measureAt)
		class, tag := c.Do(r.loadCtx, req)
		end := time.Now()
		r.finished(rec, t0, end, !t0.Before(r.measureAt), class, tag)
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
	window := slices.Clone(res.Warnings) // the observers' and guards': the whole window's
	res.Warnings = append(res.Warnings, r.self.warnings(r.spec, res)...)
	res.Warnings = append(res.Warnings, countWarnings(res)...)
	if r.tags != nil {
		r.collectTags(res, window)
	}
	return res
}

// countWarnings say what the counts of res (a run's or a tag's) mean for
// its percentiles, and that Ctrl-C cut it short.
func countWarnings(res *Result) []string {
	var w []string
	if failed := SumErrors(res.Errors) + res.Dropped; failed > 0 {
		w = append(w, fmt.Sprintf("the percentiles count %d failed or dropped requests as lower bounds "+
			"(from the intended start to the failure or give-up): run.ok_p(q) has the %d successes alone", failed, res.Count))
	}
	if res.Interrupted {
		w = append(w, fmt.Sprintf("interrupted: figures cover only what was measured before Ctrl-C (%d requests undecided)", res.Undecided))
	}
	return w
}

// collectTags sets res.Tags: each tag's figures, with the warnings of the
// whole window (window: the observers' and guards'; the generator's CPU
// and GC) and its own (its counts, its open-loop lag and lateness). The
// tags' counts must add up to the run's.
func (r *engine) collectTags(res *Result, window []string) {
	res.Tags = r.tags.results(r, res)
	if _, only := res.Tags[Untagged]; only && len(res.Tags) == 1 && len(r.tgt.(Tagged).Tags()) == 0 {
		res.Tags = nil // a generator that named no tag: an untagged run
		return
	}
	var sum Result
	for _, t := range res.Tags {
		t.Warnings = append(append(slices.Clone(window), r.self.cpuWarnings()...), r.self.openWarnings(r.spec, t)...)
		t.Warnings = append(t.Warnings, countWarnings(t)...)
		sum.Intended += t.Intended
		sum.Count += t.Count
		sum.Dropped += t.Dropped
		sum.Undecided += t.Undecided
	}
	if sum.Intended != res.Intended || sum.Count != res.Count || sum.Dropped != res.Dropped || sum.Undecided != res.Undecided {
		// Cannot happen: said out loud rather than trusted if it does.
		res.Warnings = append(res.Warnings, fmt.Sprintf("accounting: the tags hold %d requests (%d ok, %d dropped, %d undecided), the run %d (%d, %d, %d) (a generator bug)",
			sum.Intended, sum.Count, sum.Dropped, sum.Undecided, res.Intended, res.Count, res.Dropped, res.Undecided))
	}
	if o, ok := res.Tags[OtherTags]; ok {
		res.Warnings = append(res.Warnings, fmt.Sprintf("more than %d distinct tags: %d requests are counted under %q", MaxTags, o.Intended, OtherTags))
	}
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
