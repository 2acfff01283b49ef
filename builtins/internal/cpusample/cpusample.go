// Package cpusample reads who used the machine's CPU: a Sample is the CPU
// time of the machine and of every process at one moment (/proc), and two
// samples split the CPU used between them into ours (this process, the
// PIDs observed and their descendants), foreign and stolen.
package cpusample

import (
	"fmt"
	"os"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// Sample is the machine's CPU time and every process's, read at one
// moment from /proc. Two samples give who used the CPU in between.
type Sample struct {
	At    time.Time
	Busy  uint64          // non-idle ticks of all CPUs (/proc/stat)
	Steal uint64          // ticks the hypervisor gave to other guests (in Busy)
	Procs map[int]procCPU // by PID
}

type procCPU struct {
	ppid  int
	ticks uint64 // utime + stime + cutime + cstime: reaped children stay counted
}

// Take reads /proc/stat and /proc/<pid>/stat of every process.
func Take() (Sample, error) {
	s := Sample{At: time.Now(), Procs: map[int]procCPU{}}
	busy, steal, err := busyTicks()
	if err != nil {
		return s, err
	}
	s.Busy, s.Steal = busy, steal
	pids, err := procfs.ListPids()
	if err != nil {
		return s, fmt.Errorf("cpu sample: %w", err)
	}
	for _, pid := range pids {
		if st, err := procfs.ReadStat(pid); err == nil {
			s.Procs[pid] = procCPU{ppid: st.PPID, ticks: st.UTime + st.STime + st.CUTime + st.CSTime}
		}
	}
	return s, nil
}

// busyTicks sums the first line of /proc/stat except idle and iowait
// (guest time is already inside user), and returns steal on its own too.
func busyTicks() (busy, steal uint64, err error) {
	t, err := procfs.ReadCPUTimes()
	if err != nil {
		return 0, 0, fmt.Errorf("cpu sample: %w", err)
	}
	return t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ + t.Steal, t.Steal, nil
}

// ours is this process, the given PIDs, and every descendant of them in s.
func ours(s Sample, roots []int) map[int]bool {
	set := map[int]bool{os.Getpid(): true}
	for _, p := range roots {
		set[p] = true
	}
	children := map[int][]int{}
	for pid, p := range s.Procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	stack := make([]int, 0, len(set))
	for p := range set {
		stack = append(stack, p)
	}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			if !set[c] {
				set[c] = true
				stack = append(stack, c)
			}
		}
	}
	return set
}

// Usage splits the CPU used between two samples into ours (this process,
// the observed PIDs and their descendants) and foreign (everything else),
// in cores: 1.0 is one CPU busy for the whole interval.
type Usage struct {
	Ours    float64
	Foreign float64
	Steal   float64 // cores the hypervisor gave to other guests
	Seconds float64
}

// Between computes the CPU used between a and b (a taken first).
func Between(a, b Sample, observed []int) Usage {
	secs := b.At.Sub(a.At).Seconds()
	if secs <= 0 {
		return Usage{}
	}
	set := ours(b, observed)
	for pid := range ours(a, observed) {
		set[pid] = true
	}
	var own uint64
	for pid := range set {
		after, ok := b.Procs[pid]
		if !ok {
			continue // gone: its ticks moved to its (our) parent's cutime
		}
		before := a.Procs[pid] // zero if it started in between
		if after.ticks > before.ticks {
			own += after.ticks - before.ticks
		}
	}
	total := float64(b.Busy-a.Busy) / procfs.TicksPerSecond
	u := Usage{Ours: float64(own) / procfs.TicksPerSecond / secs, Seconds: secs}
	// Stolen ticks are counted busy but were no process's here: neither
	// ours nor foreign.
	u.Steal = float64(b.Steal-a.Steal) / procfs.TicksPerSecond / secs
	u.Foreign = max(0, total/secs-u.Ours-u.Steal)
	return u
}
