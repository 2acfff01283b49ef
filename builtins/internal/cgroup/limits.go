package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// Limits are what a group may use; zero values mean no limit.
type Limits struct {
	CPUs   float64 // CPU time per wall second (a quota: 0.5 is half a core)
	Memory int64   // bytes of memory, swap off (memory + swap = memory)
	Cpuset string  // CPUs the group may run on, "0-1" or "0,2"
	Pids   int64   // most processes and threads at once
}

// Zero reports whether l limits nothing.
func (l Limits) Zero() bool { return l == Limits{} }

// String is the limits as a record shows them: "cpus=0.5 memory=64MB".
func (l Limits) String() string {
	var parts []string
	if l.CPUs > 0 {
		parts = append(parts, "cpus="+strconv.FormatFloat(l.CPUs, 'g', -1, 64))
	}
	if l.Memory > 0 {
		parts = append(parts, "memory="+bytesize.Format(l.Memory))
	}
	if l.Cpuset != "" {
		parts = append(parts, "cpuset="+l.Cpuset)
	}
	if l.Pids > 0 {
		parts = append(parts, "pids="+strconv.FormatInt(l.Pids, 10))
	}
	return strings.Join(parts, " ")
}

// cfsPeriod is the CPU quota's period in µs (the kernel's default).
const cfsPeriod = 100000

// v1Controllers are the hierarchies a group joins on a v1 machine: the
// limits' own and those it is read through.
func v1Controllers(l Limits) []string {
	cs := []string{"cpu", "cpuacct", "memory", "blkio"}
	if l.Cpuset != "" {
		cs = append(cs, "cpuset")
	}
	if l.Pids > 0 {
		cs = append(cs, "pids")
	}
	return cs
}

// New makes a group named name below this process's own cgroup (in every
// hierarchy) with the limits applied. Processes join it by Add.
func New(name string, l Limits) (*Group, error) {
	own, err := FromPid(os.Getpid())
	if err != nil {
		return nil, err
	}
	g := &Group{v2: own.v2, dirs: map[string]string{}, owned: true}
	if g.v2 {
		err = g.makeV2(own.dirs[""], name, l)
	} else {
		err = g.makeV1(own, name, l)
	}
	if err != nil {
		_ = g.Remove()
		return nil, err
	}
	return g, nil
}

func (g *Group) makeV1(own *Group, name string, l Limits) error {
	for _, c := range v1Controllers(l) {
		parent := own.dirs[c]
		if parent == "" {
			return fmt.Errorf("cgroup v1 controller %s is not mounted", c)
		}
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("make cgroup: %w", err)
		}
		g.dirs[c] = dir
	}
	var w writes
	if l.CPUs > 0 {
		w.add(g.dirs["cpu"], "cpu.cfs_period_us", strconv.Itoa(cfsPeriod))
		w.add(g.dirs["cpu"], "cpu.cfs_quota_us", strconv.FormatInt(int64(l.CPUs*cfsPeriod), 10))
	}
	if l.Memory > 0 {
		w.add(g.dirs["memory"], "memory.limit_in_bytes", strconv.FormatInt(l.Memory, 10))
		if _, err := os.Stat(filepath.Join(g.dirs["memory"], "memory.memsw.limit_in_bytes")); err == nil {
			w.add(g.dirs["memory"], "memory.memsw.limit_in_bytes", strconv.FormatInt(l.Memory, 10))
		}
		w.add(g.dirs["memory"], "memory.swappiness", "0")
	}
	if l.Cpuset != "" {
		mems, _ := os.ReadFile(filepath.Join(filepath.Dir(g.dirs["cpuset"]), "cpuset.mems"))
		w.add(g.dirs["cpuset"], "cpuset.mems", strings.TrimSpace(string(mems)))
		w.add(g.dirs["cpuset"], "cpuset.cpus", l.Cpuset)
	}
	if l.Pids > 0 {
		w.add(g.dirs["pids"], "pids.max", strconv.FormatInt(l.Pids, 10))
	}
	return w.err
}

func (g *Group) makeV2(parent, name string, l Limits) error {
	// Controllers must be enabled for the parent's children; a parent that
	// holds processes itself may refuse (the "no internal processes" rule).
	var need []string
	if l.CPUs > 0 {
		need = append(need, "+cpu")
	}
	if l.Memory > 0 {
		need = append(need, "+memory")
	}
	if l.Cpuset != "" {
		need = append(need, "+cpuset")
	}
	if l.Pids > 0 {
		need = append(need, "+pids")
	}
	for _, c := range need {
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte(c), 0); err != nil {
			return fmt.Errorf("cgroup v2: enable %s in %s: %w", c[1:], parent, err)
		}
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("make cgroup: %w", err)
	}
	g.dirs[""] = dir
	var w writes
	if l.CPUs > 0 {
		w.add(dir, "cpu.max", fmt.Sprintf("%d %d", int64(l.CPUs*cfsPeriod), cfsPeriod))
	}
	if l.Memory > 0 {
		w.add(dir, "memory.max", strconv.FormatInt(l.Memory, 10))
		w.add(dir, "memory.swap.max", "0")
	}
	if l.Cpuset != "" {
		w.add(dir, "cpuset.cpus", l.Cpuset)
	}
	if l.Pids > 0 {
		w.add(dir, "pids.max", strconv.FormatInt(l.Pids, 10))
	}
	return w.err
}

// writes applies control-file writes until the first error.
type writes struct{ err error }

func (w *writes) add(dir, file, value string) {
	if w.err != nil {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		w.err = fmt.Errorf("set %s = %s: %w", file, value, err)
	}
}

// Add moves a process (and the threads it has) into the group. Processes
// it starts later are born in it.
func (g *Group) Add(pid int) error {
	seen := map[string]bool{}
	for _, d := range g.dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("move pid %d into %s: %w", pid, d, err)
		}
	}
	return nil
}

// Empty reports whether no process is left in the group.
func (g *Group) Empty() bool {
	for _, d := range g.dirs {
		data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err == nil && len(strings.TrimSpace(string(data))) > 0 {
			return false
		}
	}
	return true
}

// ErrNoGroup is returned by Read for a group whose directories are gone.
var ErrNoGroup = errors.New("cgroup is gone")

// RemoveStale removes the empty groups below this process's own cgroups
// whose name starts with prefix and for which stale says yes (their owner
// is gone); it returns how many directories went. A group that still holds
// a process stays (rmdir refuses it).
func RemoveStale(prefix string, stale func(name string) bool) int {
	own, err := FromPid(os.Getpid())
	if err != nil {
		return 0
	}
	n := 0
	seen := map[string]bool{}
	for _, parent := range own.dirs {
		if seen[parent] {
			continue
		}
		seen[parent] = true
		dirs, _ := filepath.Glob(filepath.Join(parent, prefix+"*"))
		for _, d := range dirs {
			if stale(filepath.Base(d)) && os.Remove(d) == nil {
				n++
			}
		}
	}
	return n
}
