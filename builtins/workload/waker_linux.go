package workload

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// waker wakes the process at every open-loop request's intended start.
//
// Go's scheduler sleeps in epoll_wait with a timeout in whole
// milliseconds: when every worker waits, a timer due in 200 µs fires after
// a millisecond, or whenever some response happens to arrive first. In an
// open loop that lag is latency, since latency counts from the intended
// start. A timerfd armed at each due time makes epoll_wait return on time,
// and the scheduler then runs the timers that are due: the sleeping
// worker's among them. The waker follows its own copy of the (seeded,
// deterministic) schedule, so it needs nothing from the workers.
type waker struct {
	f  *os.File
	rc syscall.RawConn
}

func newWaker() (*waker, error) {
	const tfdNonblock, tfdCloexec = syscall.O_NONBLOCK, syscall.O_CLOEXEC
	fd, _, e := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, 1 /* CLOCK_MONOTONIC */, tfdNonblock|tfdCloexec, 0)
	if e != 0 {
		return nil, os.NewSyscallError("timerfd_create", e)
	}
	f := os.NewFile(fd, "timerfd") // non-blocking: in the netpoller
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &waker{f: f, rc: rc}, nil
}

// wait returns at t, or when the file is closed (false).
func (w *waker) wait(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	spec := [4]int64{0, 0, int64(d / time.Second), int64(d % time.Second)} // interval, value
	err := w.rc.Control(func(fd uintptr) {
		_, _, e := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec[0])), 0, 0, 0)
		if e != 0 {
			spec[2], spec[3] = 0, 0
		}
	})
	if err != nil || spec[2]|spec[3] == 0 {
		return false
	}
	var buf [8]byte
	err = w.rc.Read(func(fd uintptr) bool {
		_, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), 8)
		return e != syscall.EAGAIN
	})
	return err == nil
}

func (w *waker) close() { w.f.Close() }

// sharpen runs a waker along the run's schedule until it is over or ctx
// ends; without a timerfd the run goes on with Go's timers alone.
func (r *run) sharpen() {
	w, err := newWaker()
	if err != nil {
		return
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-r.ctx.Done():
		case <-stop:
		}
		w.close()
	}()
	defer close(stop)
	p := newPacer(r.spec.arrival, r.spec.rate)
	total := r.spec.warmup + r.spec.duration
	var last time.Duration
	for {
		off := p.next()
		if off >= total {
			return
		}
		if off != 0 && off < last+wakeEvery {
			continue // the next wake, or a response, serves this one
		}
		if !w.wait(r.start.Add(off)) {
			return
		}
		last = off
	}
}

// wakeEvery bounds the waker's wake-ups: each costs a sleep and a wake of
// the generator's thread (~30 µs of CPU on a 2-core VM), so above 5,000
// requests per second a wake serves every job due within it, and dispatch
// lag stays under about this much.
const wakeEvery = 200 * time.Microsecond
