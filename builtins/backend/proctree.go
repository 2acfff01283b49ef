package backend

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat is what /proc says about one process.
type procStat struct {
	pid, ppid int
	cpuNS     int64 // own CPU time, all threads: schedstat (ns) when finer than stat ticks
	childNS   int64 // CPU of waited-for children (cutime+cstime)
	rssKB     int64
	cmdline   string
}

// clock ticks per second for /proc/<pid>/stat; 100 on every Linux we target.
const ticksPerSec = 100

func readProc(pid int) (procStat, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	data, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is state (field 3)
	if len(f) < 22 || f[0] == "Z" {
		return procStat{}, false
	}
	num := func(k int) int64 { n, _ := strconv.ParseInt(f[k-3], 10, 64); return n }
	st := procStat{pid: pid, ppid: int(num(4))}
	st.cpuNS = (num(14) + num(15)) * (1e9 / ticksPerSec)
	st.childNS = (num(16) + num(17)) * (1e9 / ticksPerSec)
	st.rssKB = num(24) * int64(os.Getpagesize()) / 1024
	if ns, ok := threadsCPU(dir, num(20)); ok && ns > st.cpuNS {
		st.cpuNS = ns
	}
	if cl, err := os.ReadFile(dir + "/cmdline"); err == nil {
		st.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
	}
	return st, true
}

// threadsCPU sums schedstat's run time (ns) over the live threads of the
// process in dir. /proc/<pid>/schedstat counts the main thread alone, which
// undercounts a Go or Java server whose work runs on other threads; threads
// that exited are gone from task/, so the caller keeps the larger of this
// and stat's whole-process ticks.
func threadsCPU(dir string, threads int64) (int64, bool) {
	names := []string{"."}
	if threads > 1 {
		ents, err := os.ReadDir(dir + "/task")
		if err != nil {
			return 0, false
		}
		names = names[:0]
		for _, e := range ents {
			names = append(names, "task/"+e.Name())
		}
	}
	var sum int64
	for _, n := range names {
		ss, err := os.ReadFile(dir + "/" + n + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		g := strings.Fields(string(ss))
		if len(g) == 0 {
			return 0, false
		}
		ns, err := strconv.ParseInt(g[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += ns
	}
	return sum, true
}

// procTree returns root and all its live descendants.
func procTree(root int) []procStat {
	rs, ok := readProc(root)
	if !ok {
		return nil
	}
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 1 {
				ppid, _ := strconv.Atoi(f[1])
				children[ppid] = append(children[ppid], pid)
			}
		}
	}
	out := []procStat{rs}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i].pid] {
			if st, ok := readProc(c); ok {
				out = append(out, st)
			}
		}
	}
	return out
}

// treeUsage sums the CPU (ns, including reaped children) and RSS (kB) of a
// process tree.
func treeUsage(root int) (cpuNS, rssKB int64) {
	for _, p := range procTree(root) {
		cpuNS += p.cpuNS + p.childNS
		rssKB += p.rssKB
	}
	return cpuNS, rssKB
}
