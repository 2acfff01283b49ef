package workload

import (
	"context"
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
	run(r *run, rec *recorder)
	stopper
}

// request is one request as the engine hands it to a client.
type request struct {
	seq      int64     // sequence number, for generators
	deadline time.Time // give up then (timeout, bounded by the run's hard end)
	measured bool      // inside the measurement window (not warmup)
}

// target makes clients; each worker gets its own.
type target interface {
	newClient() client
}

// loadSpec is what every load kind shares: loop shape and timing.
type loadSpec struct {
	clients     int     // closed loop: workers back to back
	rate        float64 // open loop: requests per second (clients == 0)
	arrival     string  // "constant" or "poisson"
	maxInflight int     // open loop: bound on requests in flight
	duration    time.Duration
	warmup      time.Duration
	window      time.Duration
	timeout     time.Duration
	label       string
	progress    io.Writer
	terminal    bool
	observers   []Observer
}

// lateAfter is the dispatch lag past which an open-loop request counts as
// late: it was sent noticeably after its intended start.
const lateAfter = 10 * time.Millisecond

// result is what one run measured, before it becomes a Run. Its counts obey
// count + sum(errors) + dropped + undecided == intended (see recorder).
type result struct {
	hist        *hdrhistogram.Histogram // latency from intended start, µs: every decided request
	ok          *hdrhistogram.Histogram // the same, successful requests alone
	service     *hdrhistogram.Histogram // from actual send, µs
	lag         *hdrhistogram.Histogram // open loop dispatch lag, µs
	errors      map[string]int64
	windows     *windows
	intended    int64 // requests due (open loop) or started (closed) in the measurement window
	count       int64 // successful requests in the measurement window
	late        int64
	dropped     int64
	undecided   int64 // Ctrl-C came before their outcome
	measured    time.Duration
	interrupted bool
	self        selfStats
	observed    map[string]float64
	warnings    []string
}

// run is one execution of the engine.
type run struct {
	spec      loadSpec
	tgt       target
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

	sched   *schedule // open loop
	workers int       // open loop; guarded by mu

	stopOnce sync.Once
	stopAt   time.Time // when Ctrl-C was first seen; set by stopTime
}

// stopTime is the moment the run was interrupted: fixed by whoever first
// sees the cancelled context, so every worker (and the final count) splits
// the schedule at the same instant: requests due before it were intended
// and are undecided if nothing decided them; later ones were not intended.
func (r *run) stopTime() time.Time {
	r.stopOnce.Do(func() { r.stopAt = time.Now() })
	return r.stopAt
}

// runLoad drives tgt according to spec until the duration is over or ctx is
// cancelled, and returns what was measured.
func runLoad(ctx context.Context, spec loadSpec, tgt target) *result {
	now := time.Now()
	r := &run{spec: spec, tgt: tgt, ctx: ctx, start: now, shared: &windows{},
		measureAt: now.Add(spec.warmup), end: now.Add(spec.warmup + spec.duration)}
	r.hardEnd = r.end.Add(spec.timeout)
	var cancel context.CancelFunc
	r.loadCtx, cancel = context.WithDeadline(ctx, r.hardEnd)
	defer cancel()
	stopAbort := context.AfterFunc(ctx, func() { r.stopTime(); r.abortAll() })
	defer stopAbort()
	prog := startProgress(r)
	dispatchDone := make(chan struct{})
	go func() {
		defer close(dispatchDone)
		if spec.clients > 0 {
			r.closedLoop()
		} else {
			r.openLoop()
		}
	}()
	res := r.measure()
	<-dispatchDone
	r.wg.Wait()
	prog.stop()
	r.closeAll()
	return r.collect(res)
}

// measure waits through warmup and the measurement window, taking the
// generator's and the observers' figures at both ends.
func (r *run) measure() *result {
	res := &result{}
	if !sleepUntil(r.ctx, r.measureAt) {
		res.interrupted = true
		return res
	}
	before := takeSelf()
	stops := r.startObservers(res)
	res.interrupted = !sleepUntil(r.ctx, r.end)
	res.measured = time.Since(r.measureAt)
	if res.measured > r.spec.duration {
		res.measured = r.spec.duration
	}
	res.self = takeSelf().since(before, res.measured)
	res.observed = r.stopObservers(stops, res)
	return res
}

func sleepUntil(ctx context.Context, t time.Time) bool {
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
func (r *run) windowOf(t time.Time) int {
	d := t.Sub(r.measureAt)
	if d < 0 {
		return -1
	}
	return int(d / r.spec.window)
}

func (r *run) inMeasurement(t time.Time) bool { return !t.Before(r.measureAt) && t.Before(r.end) }

// newWorker registers a client and a recorder for a new worker. Open-loop
// workers share recorders once there are many, bounding memory.
func (r *run) newWorker() (client, *recorder) {
	c := r.tgt.newClient()
	return c, r.register(c)
}

// register adds a worker's client or loop, so Ctrl-C reaches it, and
// returns the recorder it records into.
func (r *run) register(s stopper) *recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients = append(r.clients, s)
	if len(r.recs) < maxRecorders {
		r.recs = append(r.recs, newRecorder(r.shared))
	}
	return r.recs[(len(r.clients)-1)%len(r.recs)]
}

const maxRecorders = 64

func (r *run) abortAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		c.abort()
	}
}

func (r *run) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		c.close()
	}
}

func (r *run) deadline(t time.Time) time.Time {
	d := t.Add(r.spec.timeout)
	if d.After(r.hardEnd) {
		return r.hardEnd
	}
	return d
}

// closedLoop runs spec.clients workers back to back: a goroutine each, or
// loops of many clients each where the target can multiplex them.
func (r *run) closedLoop() {
	if m, ok := r.tgt.(multiplexed); ok {
		// A loop holds its P while it waits in epoll_wait, so one P is left
		// for the rest of the process (progress, timers, GC); on a 2-core box
		// that also leaves the target a core, as wrk -t1 and pgbench -j 1 do.
		n := min(max(runtime.GOMAXPROCS(0)-1, 1), r.spec.clients)
		for i := range n {
			l := m.newLoop(r.spec.clients/n + btoi(i < r.spec.clients%n))
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
	for range r.spec.clients {
		c, rec := r.newWorker()
		r.wg.Go(func() { r.closedWorker(c, rec) })
	}
}

// finished records a closed-loop request from t0 to end, as closedWorker
// does: warmup counts only for progress, a request Ctrl-C cut short as
// undecided.
func (r *run) finished(rec *recorder, t0, end time.Time, measured bool, class string) {
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

func (r *run) closedWorker(c client, rec *recorder) {
	for seq := int64(0); ; seq++ {
		t0 := time.Now()
		if !t0.Before(r.end) || r.ctx.Err() != nil {
			return
		}
		class := c.do(r.loadCtx, request{seq: seq, deadline: r.deadline(t0), measured: !t0.Before(r.measureAt)})
		r.finished(rec, t0, time.Now(), !t0.Before(r.measureAt), class)
	}
}

// collect merges the recorders into the result.
func (r *run) collect(res *result) *result {
	res.hist, res.ok, res.service, res.lag = newHist(), newHist(), newHist(), newHist()
	res.errors = map[string]int64{}
	res.windows = r.shared
	if r.sched != nil && r.ctx.Err() != nil {
		r.sched.abandon(r, r.recs[0])
	}
	for _, rec := range r.recs {
		rec.flush()
		res.hist.Merge(rec.hist)
		res.ok.Merge(rec.ok)
		res.service.Merge(rec.service)
		res.lag.Merge(rec.lag)
		res.late += rec.late
		res.dropped += rec.dropped
		res.undecided += rec.undecided
		for k, v := range rec.errors {
			res.errors[k] += v
		}
	}
	res.count = res.ok.TotalCount()
	res.intended = res.count + sumErrors(res.errors) + res.dropped + res.undecided
	if r.sched != nil {
		res.intended = r.intended()
	}
	if r.ctx.Err() != nil {
		res.interrupted = true
	}
	res.warnings = append(res.warnings, res.self.warnings(r.spec, res)...)
	return res
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
