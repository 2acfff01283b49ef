package loadgen

import (
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// retryAfter is how long a loop's client waits to dial again after a
// refused connection.
const retryAfter = 10 * time.Millisecond

var (
	_ multiplexed = (*HTTPTarget)(nil)
	_ multiplexed = (*SQLTarget)(nil)
	_ loop        = (*httpLoop)(nil)
	_ loop        = (*sqlLoop)(nil)
	_ loopOps     = (*httpLoop)(nil)
	_ loopOps     = (*sqlLoop)(nil)
	_ openOps     = (*httpLoop)(nil)
	_ openRunner  = (*httpLoop)(nil)
	_ openOps     = (*sqlLoop)(nil)
	_ openRunner  = (*sqlLoop)(nil)
)

// inflight is what drive knows of one client of a loop: its request in
// flight and when it may dial again.
type inflight struct {
	busy     bool
	t0       time.Time // the request's start (open loop: when it was sent)
	due      time.Time // open loop: its intended start; zero in a closed loop
	deadline time.Time
	measured bool
	retryAt  time.Time // after a refused connection
	tag      string    // the request's tag, in a tagged run
	made     time.Time // closed loop: when the request was made (its generator done), or given up unmade
	user               // closed loop with think time: when the user's next request is due
}

// loopOps is a multiplexed loop's part in drive.
type loopOps interface {
	client(i int) *inflight
	start(i int, now time.Time) bool // begin client i's next request; false if none is in flight
	expire(i int, now time.Time)     // client i's request is past its deadline
	ready(ev syscall.EpollEvent)     // client ev.Fd's socket has something
}

// drive runs a loop of n clients until the run ends: wait for sockets and
// hand them to the loop (which sends each client's next request as its
// response completes), and every scanEvery scan the clients: start idle
// ones, expire late requests, and end when the run is over and nothing is
// in flight. A client that could not start retries at its retryAt (a
// refused dial) or at the next pass (a generator error). Scanning on a
// clock rather than per wake keeps a loop of a thousand connections from
// spending its time looking at the idle ones.
func (r *engine) drive(p *netpoll.Poller, n int, ops loopOps, rec *recorder) {
	var nextScan, wakeAt time.Time
	for {
		now := time.Now()
		if r.ctx.Err() != nil {
			for i := range n { // interrupted: requests in flight are not measurements
				if c := ops.client(i); c.busy && c.measured {
					rec.undecide(c.tag) // busy stays: close drops the connection
				}
			}
			return
		}
		if !now.Before(nextScan) || !now.Before(wakeAt) {
			busy, wait := 0, netpoll.MaxWait
			for i := range n {
				c := ops.client(i)
				if !c.busy && now.Before(r.end) {
					wait = min(wait, r.startClient(ops, rec, i, c, now))
				}
				if c.busy {
					if !now.Before(c.deadline) {
						ops.expire(i, now)
						continue
					}
					busy++
					wait = min(wait, c.deadline.Sub(now))
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
			ops.ready(ev)
		}
	}
}

// startClient starts idle client i's next request, or, for a user still
// thinking, leaves it be; it returns how soon drive must look at the
// client again (netpoll.MaxWait when nothing is due sooner).
func (r *engine) startClient(ops loopOps, rec *recorder, i int, c *inflight, now time.Time) time.Duration {
	if !r.thinking() {
		if ops.start(i, now) {
			return netpoll.MaxWait
		}
		return c.retryAt.Sub(now)
	}
	if !r.userReady(&c.user, now) {
		return c.ready.Sub(now)
	}
	started := ops.start(i, now)
	// The user's send delay runs to c.made, when its generator had made
	// its request, after the generators of the users this pass started
	// before it (now is the pass's). Measured at now, a generator that
	// could not keep up hid in the latency instead.
	r.userStarts(rec, &c.user, c.made, c.tag)
	if !started { // it failed before it was sent: the user thinks again
		c.thinkAfterFailedStart(time.Now(), c.retryAt)
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

// loopBase is what the HTTP and SQL event loops share: the poller, the
// engine and recorder they run for (set when they start), and how their
// responses arrive.
type loopBase struct {
	p        *netpoll.Poller
	err      error   // making the poller failed
	r        *engine // set by runClosed and runOpenOn
	rec      *recorder
	arrivals       // open: running an open loop (runOpenOn), no request back to back
	streams  int64 // closed loop: client i draws a mix from stream streams + i (setStreams)
}

func (b *loopBase) setStreams(base int64) { b.streams = base }

// runClosed drives ops's n clients as a closed loop. Without a poller the
// loop records its error once and ends.
func (b *loopBase) runClosed(r *engine, rec *recorder, ops loopOps, n int) {
	if b.err != nil {
		now := time.Now()
		r.finished(rec, now, now, !now.Before(r.measureAt), Classify(b.err), Untagged)
		return
	}
	b.r, b.rec, b.users = r, rec, r.thinking()
	r.drive(b.p, n, ops, rec)
}

// runOpenOn runs the open-loop jobs of s on ops's n clients (see
// driveOpen). Without a poller, one worker of tgt takes them.
func (b *loopBase) runOpenOn(r *engine, rec *recorder, s *schedule, ops openOps, n int, tgt Target) {
	if b.err != nil {
		r.openWorker(tgt.NewClient(), rec, s)
		return
	}
	b.r, b.rec, b.open = r, rec, true
	r.driveOpen(b.p, ops, n, s, rec)
}

// scanEvery is how often drive looks at every client of a loop.
const scanEvery = time.Millisecond
