package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// A Lister names the processes of a target now. A sampler calls it when
// it starts and again while it runs, so processes that join the target in
// the window (a new PostgreSQL backend, a command run in a container) are
// sampled from when they are seen.
type Lister func() ([]int, error)

// PIDs is a Lister of a fixed set.
func PIDs(pids ...int) Lister {
	return func() ([]int, error) { return slices.Clone(pids), nil }
}

// ProcessTree lists root and its descendants (a process target and its
// children; a PostgreSQL postmaster and its backends), from /proc.
func ProcessTree(root int) Lister {
	return func() ([]int, error) {
		if !alive(root) {
			return nil, fmt.Errorf("process %d is not running", root)
		}
		parents, err := readParents()
		if err != nil {
			return nil, err
		}
		out := []int{root}
		for i := 0; i < len(out); i++ {
			for pid, ppid := range parents {
				if ppid == out[i] {
					out = append(out, pid)
				}
			}
		}
		slices.Sort(out)
		return out, nil
	}
}

// CgroupProcs lists the processes of a cgroup directory (v1 or v2), for a
// container whose cgroup the sampler cannot filter by (cgroup v1 without
// the perf_event controller).
func CgroupProcs(dir string) Lister {
	return func() ([]int, error) {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return nil, err
		}
		var out []int
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
		slices.Sort(out)
		return out, nil
	}
}

func alive(pid int) bool { return procfs.Alive(pid) }

// readParents maps every process to its parent.
func readParents() (map[int]int, error) {
	pids, err := procfs.ListPids()
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for _, pid := range pids {
		if st, err := procfs.ReadStat(pid); err == nil {
			out[pid] = st.PPID
		}
	}
	return out, nil
}

// uptimeTicks is the time since boot in clock ticks (procfs.TicksPerSecond),
// the unit of a process's start time.
func uptimeTicks() (int64, error) {
	up, err := procfs.Uptime()
	if err != nil {
		return 0, err
	}
	return int64(up * procfs.TicksPerSecond), nil
}

// descendsFrom reports whether pid has an ancestor in set (by the parent
// links now; a reparented orphan no longer does).
func descendsFrom(pid int, set map[int]bool) bool {
	for range 64 {
		st, err := procfs.ReadStat(pid)
		if err != nil || st.PPID <= 1 {
			return false
		}
		if set[st.PPID] {
			return true
		}
		pid = st.PPID
	}
	return false
}
