package loadgen

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// The open loop. A schedule (the pacer) fixes every request's intended
// start, and latency is measured from it, so time spent waiting for a free
// connection counts (coordinated omission corrected, as in wrk2).
//
// Where the target can be multiplexed (plain HTTP, SQL on Linux), event
// loops run it, one per P but one as in the closed loop, each with its
// share of the schedule (every n-th request) and of max_inflight: a loop
// sleeps until its next request is due or a response comes, then sends
// every request that is due on idle connections (see driveOpen). No
// goroutine or thread wakes per request beyond the loop's own.
//
// Elsewhere (https, other systems) workers claim the next job from the
// schedule, sleep until it is due, send it and come back for the next: a
// free worker never waits for a dispatcher, so after a stall the backlog
// drains as fast as the workers can go. A watcher adds workers (each with
// its own connection, up to maxInflight) whenever an unclaimed job is
// overdue, i.e. every worker is busy.

// Job is one open-loop request: its number and intended start.
type Job struct {
	Seq int64
	Due time.Time
}

// schedule hands out jobs in order, every stride-th of the pacer's from
// first on; safe for concurrent claims.
type schedule struct {
	mu     sync.Mutex
	p      pacer
	start  time.Time
	total  time.Duration
	stride int64
	next   Job
	done   bool
}

// Request i of the pacer (its i-th arrival) is numbered seqBase + i.
func newSchedule(p pacer, start time.Time, total time.Duration, seqBase, first, stride int64) *schedule {
	s := &schedule{p: p, start: start, total: total, stride: stride}
	for range first {
		p.next()
	}
	s.advance(seqBase + first)
	return s
}

// advance computes job seq; it is the caller's to hold mu.
func (s *schedule) advance(seq int64) {
	off := s.p.next()
	s.next = Job{Seq: seq, Due: s.start.Add(off)}
	s.done = off >= s.total
}

// claim takes the next job; false when the schedule is over.
func (s *schedule) claim() (Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.take()
}

func (s *schedule) take() (Job, bool) {
	if s.done {
		return Job{}, false
	}
	j := s.next
	for range s.stride - 1 {
		s.p.next() // another loop's
	}
	s.advance(j.Seq + s.stride)
	return j, true
}

// claimDue appends to q every job due by now, in one lock.
func (s *schedule) claimDue(now time.Time, q []Job) []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.done && !s.next.Due.After(now) {
		j, _ := s.take()
		q = append(q, j)
	}
	return q
}

// peek returns the next unclaimed job.
func (s *schedule) peek() (Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next, !s.done
}

// abandon counts the jobs no worker claimed before Ctrl-C: those due in the
// measurement window before the stop are undecided. Called once the workers
// have returned.
func (s *schedule) abandon(r *engine, rec *recorder) {
	stop := r.stopTime()
	for {
		j, ok := s.claim()
		if !ok || !j.Due.Before(stop) || !j.Due.Before(r.end) {
			return
		}
		if r.inMeasurement(j.Due) {
			rec.undecide(r.tagOf(j.Seq))
		}
	}
}

// intended counts the requests the run's schedule puts in the measurement
// window (before the stop, if interrupted), replaying a fresh pacer: an
// account kept apart from the workers', which must add up to it.
func (r *engine) intended() int64 {
	end := r.end
	if r.ctx.Err() != nil && r.stopTime().Before(end) {
		end = r.stopTime()
	}
	p := newPacer(r.spec.Arrival, r.spec.Rate, r.spec.SeqBase)
	var n int64
	for {
		due := r.start.Add(p.next())
		if !due.Before(end) || !due.Before(r.start.Add(r.spec.Warmup+r.spec.Duration)) {
			return n
		}
		if r.inMeasurement(due) {
			n++
		}
	}
}

// watchEvery is how often the watcher checks for overdue jobs.
const watchEvery = 2 * time.Millisecond

// openLoop runs the schedule on event loops where the target allows;
// otherwise it starts one worker and adds more while jobs go overdue.
func (r *engine) openLoop() {
	if r.openEventLoops() {
		return
	}
	if r.spec.TickAuto {
		r.tick = 0 // each worker wakes for its own request whatever the tick: a tick would only delay it
	}
	sched := newSchedule(newPacer(r.spec.Arrival, r.spec.Rate, r.spec.SeqBase), r.start, r.spec.Warmup+r.spec.Duration, r.spec.SeqBase, 0, 1)
	r.scheds = []*schedule{sched}
	r.spawn(1)
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case now := <-tick.C:
			j, ok := sched.peek()
			if !ok || now.After(r.hardEnd) {
				return
			}
			switch behind := now.Sub(j.Due); {
			case behind > lateAfter: // a stall: enough workers for every overdue job
				r.spawn(1 + int(behind.Seconds()*r.spec.Rate))
			case behind > watchEvery: // a little behind (or timer slack): one more
				r.spawn(1)
			}
		}
	}
}

// spawn starts up to n more workers, within maxInflight.
func (r *engine) spawn(n int) {
	r.mu.Lock()
	n = min(n, r.spec.MaxInflight-r.workers)
	r.workers += max(n, 0)
	r.mu.Unlock()
	for range n {
		c, rec := r.newWorker()
		r.wg.Go(func() { r.openWorker(c, rec, r.scheds[0]) })
	}
}

// sendAt is when the loop wakes for a job intended at due: at due, or with
// Spec.Tick at the first tick at or after it, so that one wake-up sends
// every request due in a tick (wrk2 wakes every millisecond). A request
// never leaves before due, and its latency counts from due.
func (r *engine) sendAt(due time.Time) time.Time {
	t := r.tick
	if t <= 0 {
		return due
	}
	off := due.Sub(r.start)
	return r.start.Add((off + t - 1) / t * t)
}

// AutoTick is the tick an event loop sending rate requests a second runs
// with when the notebook leaves the choice to it: none (each request at its
// intended start) up to autoTickRate, autoTickMax above. Each wake-up of a
// precise loop costs about as much CPU as the request it sends (on a
// 2-core VM, 15-25 µs: the loop's own sleep and wake, and over loopback
// the IPI that wakes the idle target, paid inside the loop's send). Above
// 2,500 req/s a loop that wakes for every request spends most of its CPU
// waking; with the tick it wakes at most 2,500 times a second and sends
// every request due in the last 400 µs at once (at 5,000 req/s, two per
// wake-up: the second write finds the target already awake), so the CPU
// per request falls as the rate rises, and no request is scheduled to leave
// 400 µs or more after its intended start (its latency, counted from that
// start, shows the wait, and any later wake-up besides). wrk2 wakes every
// millisecond. With a 200 µs tick above 5,000 req/s (and so a wake per
// request at 5,000) a loop cost 1.4-1.6x wrk2's CPU per request at 5,000
// req/s; see bench/workload/RESULTS.md, issue 38.
func AutoTick(rate float64) time.Duration {
	if rate <= autoTickRate {
		return 0
	}
	return autoTickMax
}

const (
	autoTickRate = 2500
	autoTickMax  = time.Second / autoTickRate
)

// openLoops is how many event loops an open loop runs on: one per P but
// one (as the closed loop), no more than it may have requests in flight.
func openLoops(s Spec) int {
	return max(min(runtime.GOMAXPROCS(0)-1, s.MaxInflight), 1)
}

// OpenRunner is a multiplexed loop that can also run its share of an open
// loop: the jobs of run's schedule on its clients, as they fall due
// (LoopBase.DriveOpen).
type OpenRunner interface {
	RunOpen(run LoopRun)
}

// openEventLoops starts the open loop's event loops, if the target has
// them: one per P but one (as the closed loop), max_inflight split between
// them, loop i taking every n-th request of the schedule from the i-th.
func (r *engine) openEventLoops() bool {
	m, ok := r.tgt.(Multiplexed)
	if !ok {
		return false
	}
	n := openLoops(r.spec)
	loops := make([]OpenRunner, 0, n)
	for i := range n {
		l := m.NewLoop(r.spec.MaxInflight/n + btoi(i < r.spec.MaxInflight%n))
		o, ok := l.(OpenRunner)
		if !ok {
			if l != nil {
				l.Close()
			}
			return false // https, or a loop that has no open mode: workers
		}
		loops = append(loops, o)
	}
	r.loops = n
	for i, o := range loops {
		s := newSchedule(newPacer(r.spec.Arrival, r.spec.Rate, r.spec.SeqBase), r.start, r.spec.Warmup+r.spec.Duration, r.spec.SeqBase, int64(i), int64(n))
		r.scheds = append(r.scheds, s)
		rec := r.register(o.(Loop))
		r.wg.Go(func() { o.RunOpen(LoopRun{r: r, rec: rec, sched: s}) })
	}
	return true
}

// openWorker sends jobs until the schedule is over or Ctrl-C. Every job it
// claims gets an outcome: sent (a success or an error class), dropped (a
// timeout or more behind when a worker got to it: after a stall the rest of
// the schedule drains this way, however late), or undecided (Ctrl-C first).
func (r *engine) openWorker(c Client, rec *recorder, sched *schedule) {
	sl := r.newSleeper()
	defer sl.close()
	for {
		j, ok := sched.claim()
		if !ok {
			return
		}
		measured := r.inMeasurement(j.Due)
		if !sl.until(r.ctx, r.sendAt(j.Due)) {
			if measured && j.Due.Before(r.stopTime()) {
				rec.undecide(r.tagOf(j.Seq))
			}
			return
		}
		sent := time.Now()
		if waited := sent.Sub(j.Due); waited > r.spec.Timeout {
			if measured {
				rec.drop(waited, r.windowOf(j.Due), r.tagOf(j.Seq))
			}
			continue
		}
		class, tag := c.Do(r.loadCtx, Request{Seq: j.Seq, Deadline: r.deadline(sent), Measured: measured})
		if r.ctx.Err() != nil {
			// Interrupted mid-request: not a measurement. A job due at or
			// after the stop is not intended (see intended), even when its
			// timer fired in the same instant as Ctrl-C.
			if measured && j.Due.Before(r.stopTime()) {
				rec.undecide(tag)
			}
			return
		}
		r.openFinished(rec, j.Due, sent, time.Now(), measured, class, tag)
	}
}

// openFinished records an open-loop request intended at due, sent at sent
// and decided at done: from its intended start, with its dispatch lag.
// After Ctrl-C it is undecided if it was due before the stop (the account
// of intended ends there).
func (r *engine) openFinished(rec *recorder, due, sent, done time.Time, measured bool, class, tag string) {
	switch {
	case r.ctx.Err() != nil:
		if measured && due.Before(r.stopTime()) {
			rec.undecide(tag) // interrupted mid-request: not a measurement
		}
	case !measured:
		rec.warm.Add(1)
	default:
		rec.dispatched(sent.Sub(due), tag)
		rec.record(done.Sub(due), done.Sub(sent), class, r.windowOf(due), tag)
		if class == "" && !done.Before(r.end) {
			rec.answeredAfter(tag)
		}
	}
}

// sleeper is how an open-loop worker waits for its next request's
// intended start: on a timerfd of its own where there is one (see waker),
// else on a Go timer.
type sleeper struct {
	w    *waker
	stop func() bool // the context watch that closes w
	tm   *time.Timer
}

func (r *engine) newSleeper() *sleeper {
	if w, err := newWaker(); err == nil {
		return &sleeper{w: w, stop: context.AfterFunc(r.ctx, w.close)}
	}
	return &sleeper{tm: time.NewTimer(time.Hour)}
}

// until waits for t; false if ctx ended first.
func (s *sleeper) until(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	if s.w != nil {
		return s.w.wait(t)
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	s.tm.Reset(d)
	select {
	case <-s.tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *sleeper) close() {
	if s.w != nil {
		s.stop()
		s.w.close()
		return
	}
	s.tm.Stop()
}
