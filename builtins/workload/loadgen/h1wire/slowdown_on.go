//go:build slowloop

package h1wire

import (
	"syscall"
	"time"
	"unsafe"
)

// slowFactor is how much CPU slowdown adds to the process: a fifth of what
// it used since the last burn, burn excluded, so a slowloop build costs
// 1.2x the CPU per request of a plain one on any machine.
const slowFactor = 0.2

// slowEvery is how many requests pass between two burns.
const slowEvery = 64

var slow struct {
	n    int
	base time.Duration // process CPU after the last burn
}

// slowdown is a deliberate regression, compiled in only with -tags
// slowloop: every slowEvery requests it spins for slowFactor of the
// process CPU used since it last spun. The CPU guard
// (bench/workload/guard_test.go) runs such a build beside the plain one
// and must fail it: a guard that cannot see a 20 % regression on the
// machine at hand says so instead of passing. Not safe for several loops
// at once (the guard runs one).
func slowdown() {
	if slow.n++; slow.n%slowEvery != 0 {
		return
	}
	now := processCPU()
	if slow.base == 0 {
		slow.base = now
		return
	}
	until := now + time.Duration(slowFactor*float64(now-slow.base))
	for now < until {
		now = processCPU()
	}
	slow.base = now
}

func processCPU() time.Duration {
	var ts syscall.Timespec
	const clockProcessCPUTime = 2
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
