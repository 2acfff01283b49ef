package loadgen

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

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

// poller is the epoll set of a multiplexed closed loop (sqlLoop, httpLoop):
// one goroutine waits for all of its clients' sockets at once, as pgbench
// and wrk do.
//
// wait is a raw system call that holds the P while it blocks, so it is
// bounded (maxWait) and the loop yields to the scheduler every yieldEvery:
// the progress line, the run's timers and Ctrl-C keep running even with
// GOMAXPROCS=1.
type poller struct {
	ep        int
	wake      [2]int // a pipe: abort writes to it, wait returns
	timer     int    // timerfd for waitFor where epoll_pwait2 is missing; -1 until needed
	quiet     int    // epoll set of waitFor's quiet waits: the pipe and the timer; -1 until needed
	events    []syscall.EpollEvent
	lastYield time.Time
}

const (
	maxWait    = 5 * time.Millisecond // longest blocking epoll_wait
	yieldEvery = time.Millisecond     // let the P's other goroutines run
	retryAfter = 10 * time.Millisecond
)

// newPoller makes an epoll set for n sockets and the wake-up pipe.
func newPoller(n int) (*poller, error) {
	p := &poller{ep: -1, wake: [2]int{-1, -1}, timer: -1, quiet: -1, events: make([]syscall.EpollEvent, n+2), lastYield: time.Now()}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return p, os.NewSyscallError("epoll_create1", err)
	}
	p.ep = ep
	if err := syscall.Pipe2(p.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return p, os.NewSyscallError("pipe2", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: -1}
	return p, os.NewSyscallError("epoll_ctl", syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_ADD, p.wake[0], &ev))
}

// add watches fd for input (and output when out), reporting id.
func (p *poller) add(fd int, id int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(id)}
	return os.NewSyscallError("epoll_ctl", syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_ADD, fd, &ev))
}

// want switches fd's interest in EPOLLOUT (a write the socket buffer could
// not take whole).
func (p *poller) want(fd, id int, out bool) {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(id)}
	if out {
		ev.Events |= syscall.EPOLLOUT
	}
	_ = syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_MOD, fd, &ev)
}

func (p *poller) del(fd int) { _ = syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_DEL, fd, nil) }

// wakeup makes a wait in progress return: abort, from any goroutine.
func (p *poller) wakeup() {
	if p.wake[1] >= 0 {
		_, _ = syscall.Write(p.wake[1], []byte{0})
	}
}

// wait yields the P if it is time, then waits up to d for events on the
// sockets in one epoll_wait, and returns them (the wake-up pipe's are
// drained and left out).
//
// It does not poll before it sleeps. The HTTP loop used to, for up to 20 µs
// whenever responses had come within 50 µs, since a sleeping thread takes
// tens of µs to wake on a VM: that bought 3-10 % req/s against a Go server,
// but every µs of polling is the client's CPU (0.7-1.9 µs per request,
// counted), where a sleep is idle time and its wake-up mostly the waker's.
// With it the loop cost 1.13-1.16x wrk's CPU per request, without it
// 0.91-0.99x (bench/workload/RESULTS.md, issue 38). Against PostgreSQL
// polling cost 20-100 % more CPU per transaction for 5-14 % more tps.
func (p *poller) wait(d time.Duration) []syscall.EpollEvent {
	if time.Since(p.lastYield) >= yieldEvery {
		runtime.Gosched()
		p.lastYield = time.Now()
	}
	d = min(max(d, 0), maxWait)
	ms := int(d / time.Millisecond)
	if d > 0 && ms == 0 {
		ms = 1
	}
	return p.ready(p.poll(ms))
}

// ready returns the sockets' events of the last poll, draining the wake-up
// pipe's.
func (p *poller) ready(n int, e syscall.Errno) []syscall.EpollEvent {
	if e != 0 {
		return nil // EINTR: a preemption or a signal; the loop comes round again
	}
	out := p.events[:0]
	for _, ev := range p.events[:n] {
		if ev.Fd == timerID {
			var b [8]byte
			_, _ = syscall.Read(p.timer, b[:])
			continue
		}
		if ev.Fd < 0 {
			var b [64]byte
			_, _ = syscall.Read(p.wake[0], b[:])
			continue
		}
		out = append(out, ev)
	}
	return out
}

func (p *poller) poll(ms int) (int, syscall.Errno) { return p.pollOn(p.ep, ms, false) }

func (p *poller) pollOn(ep, ms int, block bool) (int, syscall.Errno) {
	call := syscall.RawSyscall6
	if block {
		call = syscall.Syscall6
	}
	n, _, e := call(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), uintptr(ms), 0, 0)
	return int(n), e
}

// timerID is the epoll data of waitFor's timerfd (the wake-up pipe's is -1).
const timerID = -2

// noPwait2 is set once epoll_pwait2 (Linux 5.11) turned out missing or
// forbidden (a seccomp filter), so waitFor uses its timerfd; tests set it
// to check that path.
var noPwait2 atomic.Bool

// waitFor waits up to d for events, to the microsecond rather than the
// whole millisecond of epoll_wait's timeout: the open loop sleeps until the
// next request's intended start, and a millisecond late would be latency
// (latency counts from the intended start). It uses epoll_pwait2's
// timespec; where that is missing, a timerfd in the set armed for d, with
// a millisecond timeout as a backstop. The kernel still adds the thread's
// timer slack (50 µs by default), which lets it fold nearby wake-ups into
// one: requests due within it leave together, each measured from its own
// intended start. Like wait it is bounded by maxWait and yields the P.
//
// waitQuiet sleeps through the sockets' events (only abort wakes it) and
// then returns those ready at the end: for a loop whose responses carry
// their arrival time from the kernel, so reading them later changes no
// figure and saves a wake-up per response.
func (p *poller) waitFor(d time.Duration, mode waitMode) []syscall.EpollEvent {
	if time.Since(p.lastYield) >= yieldEvery {
		runtime.Gosched()
		p.lastYield = time.Now()
	}
	d = min(max(d, 0), maxWait)
	if d > 0 && mode == waitQuiet && p.quietSet() == nil {
		p.ready(p.sleepOn(p.quiet, d, false)) // drains the wake-up pipe and the timer
		return p.ready(p.pollOn(p.ep, 0, false))
	}
	return p.ready(p.sleepOn(p.ep, d, mode == waitBacklog))
}

// waitMode is what ends a waitFor before its time.
type waitMode int

const (
	waitEvents  waitMode = iota // a socket's event
	waitQuiet                   // only abort: sockets' events are collected at the end
	waitBacklog                 // a socket's event, and the P is given up while asleep
)

// With waitBacklog the wait is a blocking system call that Go's scheduler
// sees, so sysmon hands the P to runnable goroutines: when requests queue
// for a free connection, the responses they wait for may come from a
// target in this very process (a demo, a test server) that needs the P.
// Raw waits elsewhere: entering the scheduler's syscall path on every
// wait cost the steady state much more CPU per request.

// sleepOn waits up to d for the events of the epoll set ep.
func (p *poller) sleepOn(ep int, d time.Duration, block bool) (int, syscall.Errno) {
	if d == 0 {
		return p.pollOn(ep, 0, false)
	}
	if !noPwait2.Load() {
		ts := syscall.NsecToTimespec(int64(d))
		call := syscall.RawSyscall6
		if block {
			call = syscall.Syscall6
		}
		n, _, e := call(sysEpollPwait2, uintptr(ep), uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e != syscall.ENOSYS && e != syscall.EPERM {
			return int(n), e
		}
		noPwait2.Store(true)
	}
	if err := p.arm(d); err != nil {
		return p.pollOn(ep, int((d+time.Millisecond-1)/time.Millisecond), block)
	}
	return p.pollOn(ep, int(d/time.Millisecond)+1, block)
}

// quietSet makes the epoll set of quiet waits: the wake-up pipe and the
// timer, no sockets.
func (p *poller) quietSet() error {
	if p.quiet >= 0 {
		return nil
	}
	q, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: -1}
	if err := syscall.EpollCtl(q, syscall.EPOLL_CTL_ADD, p.wake[0], &ev); err != nil {
		syscall.Close(q)
		return os.NewSyscallError("epoll_ctl", err)
	}
	if p.timer >= 0 {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: timerID}
		if err := syscall.EpollCtl(q, syscall.EPOLL_CTL_ADD, p.timer, &ev); err != nil {
			syscall.Close(q)
			return os.NewSyscallError("epoll_ctl", err)
		}
	}
	p.quiet = q
	return nil
}

// sysEpollPwait2 is epoll_pwait2's number, the same on every architecture
// Go supports on Linux (it came after the tables were unified).
const sysEpollPwait2 = 441

// arm sets waitFor's timerfd to fire in d, creating it on first use.
func (p *poller) arm(d time.Duration) error {
	if p.timer < 0 {
		fd, _, e := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, 1 /* CLOCK_MONOTONIC */, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if e != 0 {
			return os.NewSyscallError("timerfd_create", e)
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: timerID}
		for _, ep := range []int{p.ep, p.quiet} {
			if ep < 0 {
				continue
			}
			if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, int(fd), &ev); err != nil {
				syscall.Close(int(fd))
				return os.NewSyscallError("epoll_ctl", err)
			}
		}
		p.timer = int(fd)
	}
	spec := [4]int64{0, 0, int64(d / time.Second), int64(d % time.Second)} // interval, value
	_, _, e := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(p.timer), 0, uintptr(unsafe.Pointer(&spec[0])), 0, 0, 0)
	if e != 0 {
		return os.NewSyscallError("timerfd_settime", e)
	}
	return nil
}

func (p *poller) close() {
	for _, fd := range []int{p.ep, p.wake[0], p.wake[1], p.timer, p.quiet} {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

// rawWrite writes b to the non-blocking fd; it returns how much went and
// an error other than EAGAIN.
func rawWrite(fd int, b []byte) (int, error) {
	w := 0
	for w < len(b) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[w])), uintptr(len(b)-w))
		switch e {
		case 0:
			w += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return w, nil
		default:
			return w, os.NewSyscallError("write", e)
		}
	}
	return w, nil
}

// rawRead reads into b from the non-blocking fd: (0, nil) when nothing is
// there, io.EOF when the peer closed.
func rawRead(fd int, b []byte) (int, error) {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			if n == 0 {
				return 0, io.EOF
			}
			return int(n), nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, nil
		}
		return 0, os.NewSyscallError("read", e)
	}
}

// rawReadStamped is rawRead through recvmsg on a socket with SO_TIMESTAMPNS
// set: it also returns when the kernel received the last bytes read (zero
// if the message carried no time), so a response read late is timed when
// it arrived, not when the loop got to it.
func rawReadStamped(fd int, b []byte, oob *[64]byte) (int, time.Time, error) {
	iov := syscall.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	msg := syscall.Msghdr{Iov: &iov, Iovlen: 1, Control: &oob[0]}
	for {
		msg.SetControllen(len(oob))
		n, _, e := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), 0)
		switch e {
		case 0:
			if n == 0 {
				return 0, time.Time{}, io.EOF
			}
			return int(n), stampOf(oob[:msg.Controllen]), nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, time.Time{}, nil
		}
		return 0, time.Time{}, os.NewSyscallError("recvmsg", e)
	}
}

// stampOf finds the SO_TIMESTAMPNS time among a message's control data.
func stampOf(oob []byte) time.Time {
	for len(oob) >= syscall.SizeofCmsghdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < syscall.SizeofCmsghdr || l > len(oob) {
			break
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && l >= syscall.CmsgLen(int(unsafe.Sizeof(syscall.Timespec{}))) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[syscall.CmsgLen(0)]))
			return time.Unix(ts.Unix())
		}
		oob = oob[min(syscall.CmsgSpace(l-syscall.CmsgLen(0)), len(oob)):]
	}
	return time.Time{}
}

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
func (r *engine) drive(p *poller, n int, ops loopOps, rec *recorder) {
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
			busy, wait := 0, maxWait
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
			// Sleep until something is due (usually maxWait away: a
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
// client again (maxWait when nothing is due sooner).
func (r *engine) startClient(ops loopOps, rec *recorder, i int, c *inflight, now time.Time) time.Duration {
	if !r.thinking() {
		if ops.start(i, now) {
			return maxWait
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
	return maxWait
}

// waitLoop waits up to d for the sockets: to the millisecond, or, when
// users think, to the microsecond, so each starts when its think ends.
func (r *engine) waitLoop(p *poller, d time.Duration) []syscall.EpollEvent {
	if r.thinking() {
		return p.waitFor(d, waitEvents)
	}
	return p.wait(d)
}

// loopBase is what the HTTP and SQL event loops share: the poller, the
// engine and recorder they run for (set when they start), and how their
// responses arrive.
type loopBase struct {
	p        *poller
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
		r.finished(rec, now, now, !now.Before(r.measureAt), classify(b.err), Untagged)
		return
	}
	b.r, b.rec, b.users = r, rec, r.thinking()
	r.drive(b.p, n, ops, rec)
}

// runOpenOn runs the open-loop jobs of s on ops's n clients (see
// driveOpen). Without a poller, one worker of tgt takes them.
func (b *loopBase) runOpenOn(r *engine, rec *recorder, s *schedule, ops openOps, n int, tgt Target) {
	if b.err != nil {
		r.openWorker(tgt.newClient(), rec, s)
		return
	}
	b.r, b.rec, b.open = r, rec, true
	r.driveOpen(b.p, ops, n, s, rec)
}

// detach takes a connection's socket out of Go's netpoller and gives it to
// an event loop (HTTP or SQL) as a plain descriptor: a duplicate that stays
// open when the connection (and with it the netpoller's registration) is
// closed. Left in, every response also woke the runtime's netpoll thread
// (an idle P's M blocks in it, and the registration is edge-triggered for
// reads) to find no goroutine waiting: unpinned on 2 cores that thread's
// wake-ups cost the HTTP loop 12.1-12.6 µs of CPU per request against
// 10.0-10.3 detached, and 72-74k req/s against 82-86k (wrk: 83-86k).
func detach(conn net.Conn) (int, error) {
	defer conn.Close()
	fd, err := connFD(conn)
	if err != nil {
		return -1, err
	}
	dup, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		return -1, os.NewSyscallError("fcntl", e)
	}
	return int(dup), nil // non-blocking: the flag belongs to the socket, shared with the duplicate
}

// scanEvery is how often drive looks at every client of a loop.
const scanEvery = time.Millisecond
