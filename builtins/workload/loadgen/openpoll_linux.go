package loadgen

import (
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// OpenOps is a multiplexed loop's part in driveOpen, beside the closed
// loop's (Client, Expire, Ready). The loop records each request's outcome
// through LoopBase.Settled, which measures it from its intended start.
type OpenOps interface {
	LoopOps
	// Launch sends j on client i (dialling first if i has no connection);
	// a failure to send is recorded at once and leaves i idle.
	Launch(i int, j Job, now time.Time)
	// Stamped says whether responses carry the kernel's time of arrival
	// (so far every one has): then the loop need not wake for each
	// (LoopBase has it).
	Stamped() bool
}

// openDriver is one event loop's share of an open loop: its schedule, its
// clients (opened as they are first needed, up to slots) and the requests
// that are due but wait for an idle client.
type openDriver struct {
	r     *engine
	rec   *recorder
	ops   OpenOps
	sched *schedule

	slots int    // clients this loop may have: its share of max_inflight
	used  int    // clients 0..used-1 have been launched at least once
	free  []int  // idle clients, the most recently used last (its connection is warm)
	idle  []bool // whether client i is in free
	queue []Job  // due and not yet sent, oldest first, from head
	head  int

	nextExpire time.Time // no request in flight has a deadline before this
}

// driveOpen runs s on ops's clients until the schedule is over and nothing
// is in flight or waiting, or Ctrl-C: on each wake it takes every job now
// due, sends as many as there are idle clients (opening more up to slots),
// drops those that waited a timeout, expires requests past their deadline,
// and sleeps until the next job is due, a deadline passes or a socket is
// ready. A job that waits for a client is measured from its intended
// start like every other, so the wait shows in the percentiles.
func (r *engine) driveOpen(p *netpoll.Poller, ops OpenOps, slots int, s *schedule, rec *recorder) {
	d := &openDriver{r: r, rec: rec, ops: ops, sched: s, slots: slots, idle: make([]bool, slots)}
	for {
		now := time.Now()
		if r.ctx.Err() != nil {
			d.interrupted()
			return
		}
		d.queue = s.claimDue(now, d.queue) // with a tick, now is on one
		d.dispatch(now)
		if !now.Before(d.nextExpire) {
			d.expire(now)
		}
		wake, more := d.wakeAt(now)
		if !more {
			return
		}
		// While nothing waits for a client and the responses carry their
		// arrival time, sleep through them until the next job is due:
		// one wake-up per request (or per batch) instead of two.
		mode := netpoll.WaitEvents
		_, scheduled := s.peek()
		switch {
		case d.head < len(d.queue):
			mode = netpoll.WaitBacklog
		case scheduled && ops.Stamped(): // not at the end: wake for the last responses
			mode = netpoll.WaitQuiet
		}
		for _, ev := range p.WaitFor(time.Until(wake), mode) {
			ops.Ready(ev)
			d.settle(int(ev.Fd))
		}
	}
}

// dispatch sends the queued jobs on idle clients, oldest first, and drops
// those that waited longer than a timeout for one (as a worker does).
func (d *openDriver) dispatch(now time.Time) {
	r := d.r
	for d.head < len(d.queue) {
		j := d.queue[d.head]
		if waited := now.Sub(j.Due); waited > r.spec.Timeout {
			d.head++
			if r.inMeasurement(j.Due) {
				d.rec.drop(waited, r.windowOf(j.Due), r.tagOf(j.Seq))
			}
			continue
		}
		i, ok := d.take()
		if !ok {
			break
		}
		d.head++
		now = time.Now() // a dial takes a while: each send is timed on its own
		d.ops.Launch(i, j, now)
		if c := d.ops.Client(i); c.Busy && c.Deadline.Before(d.nextExpire) {
			d.nextExpire = c.Deadline
		}
		d.settle(i)
	}
	if d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
	} else if d.head > 1024 && d.head > len(d.queue)/2 {
		d.queue, d.head = append(d.queue[:0], d.queue[d.head:]...), 0
	}
}

// take returns an idle client, or a new one while there are fewer than slots.
func (d *openDriver) take() (int, bool) {
	if n := len(d.free); n > 0 {
		i := d.free[n-1]
		d.free = d.free[:n-1]
		d.idle[i] = false
		return i, true
	}
	if d.used < d.slots {
		d.used++
		return d.used - 1, true
	}
	return 0, false
}

// settle puts client i back among the idle ones once its request is over.
func (d *openDriver) settle(i int) {
	if i < d.used && !d.idle[i] && !d.ops.Client(i).Busy {
		d.idle[i] = true
		d.free = append(d.free, i)
	}
}

// expire ends the requests past their deadline and notes the next deadline.
func (d *openDriver) expire(now time.Time) {
	d.nextExpire = now.Add(d.r.spec.Timeout)
	for i := range d.used {
		c := d.ops.Client(i)
		if !c.Busy {
			continue
		}
		if !now.Before(c.Deadline) {
			d.ops.Expire(i, now)
			d.settle(i)
			continue
		}
		if c.Deadline.Before(d.nextExpire) {
			d.nextExpire = c.Deadline
		}
	}
}

// wakeAt is when the loop must look again without a socket event: the next
// job's intended start, the next deadline, or when the oldest waiting job
// will have waited a timeout. more is false once everything is decided.
func (d *openDriver) wakeAt(now time.Time) (time.Time, bool) {
	busy := d.used - len(d.free)
	wake := now.Add(netpoll.MaxWait)
	if busy > 0 {
		wake = minTime(wake, d.nextExpire)
	}
	if d.head < len(d.queue) {
		wake = minTime(wake, d.queue[d.head].Due.Add(d.r.spec.Timeout))
	}
	j, scheduled := d.sched.peek()
	if scheduled {
		wake = minTime(wake, d.r.sendAt(j.Due))
	}
	return wake, scheduled || busy > 0 || d.head < len(d.queue)
}

// interrupted counts what Ctrl-C left without an outcome: requests in
// flight and jobs waiting, those of the window due before the stop.
func (d *openDriver) interrupted() {
	r, stop := d.r, d.r.stopTime()
	for i := range d.used {
		if c := d.ops.Client(i); c.Busy && c.Measured && c.Due.Before(stop) {
			d.rec.undecide(c.Tag) // busy stays: close drops the connection
		}
	}
	for _, j := range d.queue[d.head:] {
		if r.inMeasurement(j.Due) && j.Due.Before(stop) {
			d.rec.undecide(r.tagOf(j.Seq))
		}
	}
}

// arrivals is an event loop's way of reading responses: with the kernel's
// receive time (SO_TIMESTAMPNS) once the loop runs open, so it can read
// them late (see driveOpen), or runs users who think, so a response that
// came while the loop made other users' requests (a slow generator) is
// timed when it came: its latency is the target's, and its user's think
// starts then (the wait for the loop shows as the next send's delay,
// Result.Lag). stamps is set once a response came with its time, noStamps
// for good once a socket refused the option or a read came without one
// after some came with it; then the loop wakes for every response.
type arrivals struct {
	open, stamps, noStamps bool
	users                  bool // a closed loop of users who think: receive times too
	oob                    [64]byte
}

func (a *arrivals) Stamped() bool { return a.stamps && !a.noStamps }

// Watch asks fd's socket for receive times, in an open loop or one of
// users who think.
func (a *arrivals) Watch(fd int) {
	if (a.open || a.users) && !a.noStamps && syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1) != nil {
		a.noStamps = true
	}
}

// Read reads what fd has into b, and when it came: the kernel's receive
// time where the loop asked for it, else now. (A closed or failed
// connection has no such time: read late, its failure is timed late.)
func (a *arrivals) Read(fd int, b []byte) (int, time.Time, error) {
	if !(a.open || a.users) || a.noStamps {
		n, err := netpoll.RawRead(fd, b)
		return n, time.Now(), err
	}
	n, at, err := netpoll.RawReadStamped(fd, b, &a.oob)
	now := time.Now()
	switch {
	case n == 0:
		return n, now, err
	case at.IsZero() || at.After(now):
		// The first responses may come without: the kernel turns receive
		// times on a moment after the first socket asks (a deferred static
		// key). Once they came, one missing means they stopped: wake for
		// every response from then on.
		a.noStamps = a.stamps
		return n, now, err
	}
	a.stamps = true
	return n, at, err
}

// settled records the outcome of client c's request, decided at end: from
// its start in a closed loop, from its intended start in an open one.
func (r *engine) settled(rec *recorder, c *Inflight, end time.Time, class string) {
	if c.Due.IsZero() {
		r.finished(rec, c.T0, end, c.Measured, class, c.Tag)
		if r.thinking() {
			c.thinkFrom(end)
		}
		return
	}
	r.openFinished(rec, c.Due, c.T0, end, c.Measured, class, c.Tag)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
