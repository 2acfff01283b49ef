package loadgen

import (
	"context"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// RetryAfter is how long a loop's client waits to dial again after a
// refused connection.
const RetryAfter = 10 * time.Millisecond

// Inflight is what drive knows of one client of a loop: its request in
// flight and when it may dial again. The loop sets it as its request
// starts (Busy, T0, Measured, Deadline; Made and Tag when it makes it)
// and LoopBase.Settled reads it when it ends.
type Inflight struct {
	Busy     bool
	T0       time.Time // the request's start (open loop: when it was sent)
	Due      time.Time // open loop: its intended start; zero in a closed loop
	Deadline time.Time
	Measured bool
	RetryAt  time.Time // after a refused connection
	Tag      string    // the request's tag, in a tagged run
	Made     time.Time // closed loop: when the request was made (its generator done), or given up unmade
	user               // closed loop with think time: when the user's next request is due
}

// LoopOps is a multiplexed loop's part in drive: its clients are numbered
// 0..n-1, and the epoll data of a client's socket is its number.
type LoopOps interface {
	Client(i int) *Inflight
	Start(i int, now time.Time) bool // begin client i's next request; false if none is in flight
	Expire(i int, now time.Time)     // client i's request is past its deadline
	Ready(ev syscall.EpollEvent)     // client ev.Fd's socket has something
}

// drive runs a loop of n clients until the run ends: wait for sockets and
// hand them to the loop (which sends each client's next request as its
// response completes), and every scanEvery scan the clients: start idle
// ones, expire late requests, and end when the run is over and nothing is
// in flight. A client that could not start retries at its retryAt (a
// refused dial) or at the next pass (a generator error). Scanning on a
// clock rather than per wake keeps a loop of a thousand connections from
// spending its time looking at the idle ones.
func (r *engine) drive(p *netpoll.Poller, n int, ops LoopOps, rec *recorder) {
	var nextScan, wakeAt time.Time
	for {
		now := time.Now()
		if r.ctx.Err() != nil {
			for i := range n { // interrupted: requests in flight are not measurements
				if c := ops.Client(i); c.Busy && c.Measured {
					rec.undecide(c.Tag) // busy stays: close drops the connection
				}
			}
			return
		}
		if !now.Before(nextScan) || !now.Before(wakeAt) {
			busy, wait := 0, netpoll.MaxWait
			for i := range n {
				c := ops.Client(i)
				if !c.Busy && now.Before(r.end) {
					wait = min(wait, r.startClient(ops, rec, i, c, now))
				}
				if c.Busy {
					if !now.Before(c.Deadline) {
						ops.Expire(i, now)
						continue
					}
					busy++
					wait = min(wait, c.Deadline.Sub(now))
				}
			}
			if busy == 0 && !now.Before(r.end) {
				return
			}
			// Sleep until something is due (usually netpoll.MaxWait away: a
			// shorter epoll_wait timeout cost the SQL loop ~3 µs of
			// system time per transaction); look again no sooner than
			// scanEvery when woken by sockets.
			wakeAt, nextScan = now.Add(max(wait, 0)), now.Add(scanEvery)
		}
		for _, ev := range r.waitLoop(p, wakeAt.Sub(now)) {
			ops.Ready(ev)
		}
	}
}

// startClient starts idle client i's next request, or, for a user still
// thinking, leaves it be; it returns how soon drive must look at the
// client again (netpoll.MaxWait when nothing is due sooner).
func (r *engine) startClient(ops LoopOps, rec *recorder, i int, c *Inflight, now time.Time) time.Duration {
	if !r.thinking() {
		if ops.Start(i, now) {
			return netpoll.MaxWait
		}
		return c.RetryAt.Sub(now)
	}
	if !r.userReady(&c.user, now) {
		return c.ready.Sub(now)
	}
	started := ops.Start(i, now)
	// The user's send delay runs to c.Made, when its generator had made
	// its request, after the generators of the users this pass started
	// before it (now is the pass's). Measured at now, a generator that
	// could not keep up hid in the latency instead.
	r.userStarts(rec, &c.user, c.Made, c.Tag)
	if !started { // it failed before it was sent: the user thinks again
		c.thinkAfterFailedStart(time.Now(), c.RetryAt)
		return c.ready.Sub(now)
	}
	return netpoll.MaxWait
}

// waitLoop waits up to d for the sockets: to the millisecond, or, when
// users think, to the microsecond, so each starts when its think ends.
func (r *engine) waitLoop(p *netpoll.Poller, d time.Duration) []syscall.EpollEvent {
	if r.thinking() {
		return p.WaitFor(d, netpoll.WaitEvents)
	}
	return p.Wait(d)
}

// LoopBase is what a multiplexed loop (HTTP's, PostgreSQL's) embeds: its
// poller, the run it drives (set by DriveClosed and DriveOpen, before the
// first request), and how its responses arrive (Watch, Read). Its methods
// are the engine's side of a request's life: the run's clock (End,
// MeasureAt, InMeasurement, Deadline, Thinking, Interrupted) and the
// outcome's record (Settled, Finished).
type LoopBase struct {
	Poller   *netpoll.Poller
	PollErr  error // making the poller failed: the loop records it once and ends
	r        *engine
	rec      *recorder
	arrivals       // open: running an open loop (DriveOpen), no request back to back
	streams  int64 // closed loop: client i draws a mix from stream streams + i (setStreams)
}

func (b *LoopBase) setStreams(base int64) { b.streams = base }

// Stream is the stream client i of the loop draws a mix from (Mix).
func (b *LoopBase) Stream(i int) int64 { return b.streams + int64(i) }

// Open says whether the loop runs an open loop's jobs (DriveOpen): then a
// client sends only what the schedule gives it, never back to back.
func (b *LoopBase) Open() bool { return b.open }

// DriveClosed drives ops's n clients as a closed loop until the run ends.
// Without a poller the loop records its error once and ends.
func (b *LoopBase) DriveClosed(run LoopRun, ops LoopOps, n int) {
	r, rec := run.r, run.rec
	if b.PollErr != nil {
		now := time.Now()
		r.finished(rec, now, now, !now.Before(r.measureAt), Classify(b.PollErr), Untagged)
		return
	}
	b.r, b.rec, b.users = r, rec, r.thinking()
	r.drive(b.Poller, n, ops, rec)
}

// DriveOpen runs the open-loop jobs of run's schedule on ops's n clients
// (see driveOpen). Without a poller, one worker of tgt takes them.
func (b *LoopBase) DriveOpen(run LoopRun, ops OpenOps, n int, tgt Target) {
	r, rec, s := run.r, run.rec, run.sched
	if b.PollErr != nil {
		r.openWorker(tgt.NewClient(), rec, s)
		return
	}
	b.r, b.rec, b.open = r, rec, true
	r.driveOpen(b.Poller, ops, n, s, rec)
}

// End is when the run's last request may start.
func (b *LoopBase) End() time.Time { return b.r.end }

// MeasureAt is when the measurement window opens (the warmup's end).
func (b *LoopBase) MeasureAt() time.Time { return b.r.measureAt }

// InMeasurement says whether t is inside the measurement window.
func (b *LoopBase) InMeasurement(t time.Time) bool { return b.r.inMeasurement(t) }

// Deadline is when a request started at t gives up: its timeout, bounded
// by the run's hard end.
func (b *LoopBase) Deadline(t time.Time) time.Time { return b.r.deadline(t) }

// Thinking says whether the loop's clients are users who think between
// requests: then drive starts each when its think ends, and a client must
// not send back to back.
func (b *LoopBase) Thinking() bool { return b.r.thinking() }

// Interrupted says whether the run was cut short (Ctrl-C).
func (b *LoopBase) Interrupted() bool { return b.r.ctx.Err() != nil }

// LoadContext is the load's context: it ends with Ctrl-C or at the run's
// hard end (a dial or an acquire waits no longer).
func (b *LoopBase) LoadContext() context.Context { return b.r.loadCtx }

// Settled records the outcome of client c's request, decided at end: from
// its start in a closed loop, from its intended start in an open one.
func (b *LoopBase) Settled(c *Inflight, end time.Time, class string) {
	b.r.settled(b.rec, c, end, class)
}

// Finished records a closed-loop request of tag that never went in flight
// (its generator failed, its dial was refused) from t0 to end.
func (b *LoopBase) Finished(t0, end time.Time, measured bool, class, tag string) {
	b.r.finished(b.rec, t0, end, measured, class, tag)
}

// scanEvery is how often drive looks at every client of a loop.
const scanEvery = time.Millisecond
