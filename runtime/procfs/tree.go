package procfs

import (
	"strconv"
	"time"
)

// Proc is a live process as a server's figures count it.
type Proc struct {
	PID, PPID int
	// CPU is its own CPU time over every thread: schedstat's nanoseconds
	// when they are more than stat's ticks say.
	CPU      time.Duration
	ChildCPU time.Duration // of waited-for children
	RSSKB    int64
	Cmdline  string
}

// ReadProc reads a live process; false when it is gone or a zombie.
func ReadProc(pid int) (Proc, bool) {
	st, err := ReadStat(pid)
	if err != nil || st.Dead() {
		return Proc{}, false
	}
	p := Proc{PID: pid, PPID: st.PPID, CPU: st.CPU(), ChildCPU: st.ChildCPU(), RSSKB: st.RSSKB(), Cmdline: Cmdline(pid)}
	if ns, ok := threadsCPU(pid, st.Threads); ok && time.Duration(ns) > p.CPU {
		p.CPU = time.Duration(ns)
	}
	return p, true
}

// threadsCPU sums schedstat's run time (ns) over the live threads of pid.
// /proc/PID/schedstat counts the main thread alone, which undercounts a Go
// or Java server whose work runs on other threads; a process of one thread
// is read there, without listing its tasks.
func threadsCPU(pid int, threads int64) (int64, bool) {
	if threads > 1 {
		d, err := ThreadsCPU(pid)
		return int64(d), err == nil
	}
	ns, err := schedRun("/proc/" + strconv.Itoa(pid) + "/schedstat")
	return ns, err == nil
}

// Children maps every process /proc shows to its children.
func Children() map[int][]int {
	out := map[int][]int{}
	for _, pid := range Pids() {
		if st, err := ReadStat(pid); err == nil {
			out[st.PPID] = append(out[st.PPID], pid)
		}
	}
	return out
}

// Tree returns root and all its live descendants (none when root is gone).
func Tree(root int) []Proc {
	rs, ok := ReadProc(root)
	if !ok {
		return nil
	}
	children := Children()
	out := []Proc{rs}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i].PID] {
			if p, ok := ReadProc(c); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// TreePids is root and its descendants (none for 0).
func TreePids(root int) []int {
	if root == 0 {
		return nil
	}
	var out []int
	for _, p := range Tree(root) {
		out = append(out, p.PID)
	}
	return out
}

// TreeUsage sums the CPU (including reaped children) and resident size
// (kB) of a process tree.
func TreeUsage(root int) (cpu time.Duration, rssKB int64) {
	for _, p := range Tree(root) {
		cpu += p.CPU + p.ChildCPU
		rssKB += p.RSSKB
	}
	return cpu, rssKB
}
