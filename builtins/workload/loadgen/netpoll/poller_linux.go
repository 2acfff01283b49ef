package netpoll

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

// Poller is the epoll set of a multiplexed closed loop (sqlLoop, httpLoop):
// one goroutine waits for all of its clients' sockets at once, as pgbench
// and wrk do.
//
// wait is a raw system call that holds the P while it blocks, so it is
// bounded (MaxWait) and the loop yields to the scheduler every yieldEvery:
// the progress line, the run's timers and Ctrl-C keep running even with
// GOMAXPROCS=1.
type Poller struct {
	ep        int
	wake      [2]int // a pipe: abort writes to it, wait returns
	timer     int    // timerfd for WaitFor where epoll_pwait2 is missing; -1 until needed
	quiet     int    // epoll set of WaitFor's quiet waits: the pipe and the timer; -1 until needed
	events    []syscall.EpollEvent
	lastYield time.Time
}

const (
	MaxWait    = 5 * time.Millisecond // longest blocking epoll_wait
	yieldEvery = time.Millisecond     // let the P's other goroutines run
)

// NewPoller makes an epoll set for n sockets and the wake-up pipe.
func NewPoller(n int) (*Poller, error) {
	p := &Poller{ep: -1, wake: [2]int{-1, -1}, timer: -1, quiet: -1, events: make([]syscall.EpollEvent, n+2), lastYield: time.Now()}
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

// Add watches fd for input (and output when out), reporting id.
func (p *Poller) Add(fd int, id int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(id)}
	return os.NewSyscallError("epoll_ctl", syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_ADD, fd, &ev))
}

// Want switches fd's interest in EPOLLOUT (a write the socket buffer could
// not take whole).
func (p *Poller) Want(fd, id int, out bool) {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(id)}
	if out {
		ev.Events |= syscall.EPOLLOUT
	}
	_ = syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_MOD, fd, &ev)
}

func (p *Poller) Del(fd int) { _ = syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_DEL, fd, nil) }

// Wakeup makes a wait in progress return: abort, from any goroutine.
func (p *Poller) Wakeup() {
	if p.wake[1] >= 0 {
		_, _ = syscall.Write(p.wake[1], []byte{0})
	}
}

// Wait yields the P if it is time, then waits up to d for events on the
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
func (p *Poller) Wait(d time.Duration) []syscall.EpollEvent {
	if time.Since(p.lastYield) >= yieldEvery {
		runtime.Gosched()
		p.lastYield = time.Now()
	}
	d = min(max(d, 0), MaxWait)
	ms := int(d / time.Millisecond)
	if d > 0 && ms == 0 {
		ms = 1
	}
	return p.ready(p.poll(ms))
}

// ready returns the sockets' events of the last poll, draining the wake-up
// pipe's.
func (p *Poller) ready(n int, e syscall.Errno) []syscall.EpollEvent {
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

func (p *Poller) poll(ms int) (int, syscall.Errno) { return p.pollOn(p.ep, ms, false) }

func (p *Poller) pollOn(ep, ms int, block bool) (int, syscall.Errno) {
	call := syscall.RawSyscall6
	if block {
		call = syscall.Syscall6
	}
	n, _, e := call(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), uintptr(ms), 0, 0)
	return int(n), e
}

// timerID is the epoll data of WaitFor's timerfd (the wake-up pipe's is -1).
const timerID = -2

// noPwait2 is set once epoll_pwait2 (Linux 5.11) turned out missing or
// forbidden (a seccomp filter), so WaitFor uses its timerfd; tests set it
// to check that path.
var noPwait2 atomic.Bool

// UseTimerfd makes WaitFor take the timerfd path (on) or try epoll_pwait2
// again (off), and returns the setting before: for tests of a loop that
// must hold its timing both ways.
func UseTimerfd(on bool) (was bool) { return noPwait2.Swap(on) }

// WaitFor waits up to d for events, to the microsecond rather than the
// whole millisecond of epoll_wait's timeout: the open loop sleeps until the
// next request's intended start, and a millisecond late would be latency
// (latency counts from the intended start). It uses epoll_pwait2's
// timespec; where that is missing, a timerfd in the set armed for d, with
// a millisecond timeout as a backstop. The kernel still adds the thread's
// timer slack (50 µs by default), which lets it fold nearby wake-ups into
// one: requests due within it leave together, each measured from its own
// intended start. Like wait it is bounded by MaxWait and yields the P.
//
// WaitQuiet sleeps through the sockets' events (only abort wakes it) and
// then returns those ready at the end: for a loop whose responses carry
// their arrival time from the kernel, so reading them later changes no
// figure and saves a wake-up per response.
func (p *Poller) WaitFor(d time.Duration, mode WaitMode) []syscall.EpollEvent {
	if time.Since(p.lastYield) >= yieldEvery {
		runtime.Gosched()
		p.lastYield = time.Now()
	}
	d = min(max(d, 0), MaxWait)
	if d > 0 && mode == WaitQuiet && p.quietSet() == nil {
		p.ready(p.sleepOn(p.quiet, d, false)) // drains the wake-up pipe and the timer
		return p.ready(p.pollOn(p.ep, 0, false))
	}
	return p.ready(p.sleepOn(p.ep, d, mode == WaitBacklog))
}

// WaitMode is what ends a WaitFor before its time.
type WaitMode int

const (
	WaitEvents  WaitMode = iota // a socket's event
	WaitQuiet                   // only abort: sockets' events are collected at the end
	WaitBacklog                 // a socket's event, and the P is given up while asleep
)

// With WaitBacklog the wait is a blocking system call that Go's scheduler
// sees, so sysmon hands the P to runnable goroutines: when requests queue
// for a free connection, the responses they wait for may come from a
// target in this very process (a demo, a test server) that needs the P.
// Raw waits elsewhere: entering the scheduler's syscall path on every
// wait cost the steady state much more CPU per request.

// sleepOn waits up to d for the events of the epoll set ep.
func (p *Poller) sleepOn(ep int, d time.Duration, block bool) (int, syscall.Errno) {
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
func (p *Poller) quietSet() error {
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

// arm sets WaitFor's timerfd to fire in d, creating it on first use.
func (p *Poller) arm(d time.Duration) error {
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

func (p *Poller) Close() {
	for _, fd := range []int{p.ep, p.wake[0], p.wake[1], p.timer, p.quiet} {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

// RawWrite writes b to the non-blocking fd; it returns how much went and
// an error other than EAGAIN.
func RawWrite(fd int, b []byte) (int, error) {
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

// RawRead reads into b from the non-blocking fd: (0, nil) when nothing is
// there, io.EOF when the peer closed.
func RawRead(fd int, b []byte) (int, error) {
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

// RawReadStamped is RawRead through recvmsg on a socket with SO_TIMESTAMPNS
// set: it also returns when the kernel received the last bytes read (zero
// if the message carried no time), so a response read late is timed when
// it arrived, not when the loop got to it.
func RawReadStamped(fd int, b []byte, oob *[64]byte) (int, time.Time, error) {
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

// Detach takes a connection's socket out of Go's netpoller and gives it to
// an event loop (HTTP or SQL) as a plain descriptor: a duplicate that stays
// open when the connection (and with it the netpoller's registration) is
// closed. Left in, every response also woke the runtime's netpoll thread
// (an idle P's M blocks in it, and the registration is edge-triggered for
// reads) to find no goroutine waiting: unpinned on 2 cores that thread's
// wake-ups cost the HTTP loop 12.1-12.6 µs of CPU per request against
// 10.0-10.3 detached, and 72-74k req/s against 82-86k (wrk: 83-86k).
func Detach(conn net.Conn) (int, error) {
	defer conn.Close()
	fd, err := ConnFD(conn)
	if err != nil {
		return -1, err
	}
	dup, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		return -1, os.NewSyscallError("fcntl", e)
	}
	return int(dup), nil // non-blocking: the flag belongs to the socket, shared with the duplicate
}
