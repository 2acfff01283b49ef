// Package cgroup limits and observes a group of processes through the
// kernel's cgroups. It reads and writes control groups v1 (one hierarchy per
// controller, as on this kind of machine) or v2 (one unified hierarchy).
//
// A Group is either made by benchbook for a plain process or a PostgreSQL
// cluster (New, with Limits: CPU quota, cpuset, memory with swap off, pids),
// or found for a process something else started (FromPid: a container's
// init, whose cgroup the engine made). Both are read the same way (Read):
// CPU time, anonymous memory, page cache, the usage high-water, I/O bytes
// and OOM kills, from v1's cpuacct/memory/blkio files or v2's cpu.stat,
// memory.stat, memory.events and io.stat.
package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// Root is where cgroup hierarchies are mounted.
const Root = "/sys/fs/cgroup"

// V2 reports whether the machine runs the unified hierarchy alone.
func V2() bool {
	_, err := os.Stat(filepath.Join(Root, "cgroup.controllers"))
	return err == nil
}

// Group is a set of cgroup directories holding the same processes: one per
// v1 controller, or the one v2 directory.
type Group struct {
	v2    bool
	dirs  map[string]string // v1 controller (cpu, cpuacct, memory, cpuset, pids, blkio) -> dir; v2: "" -> dir
	owned bool              // made by New: Remove deletes the dirs
}

// Describe says where the group lives, for errors and provenance.
func (g *Group) Describe() string {
	if g.v2 {
		return "cgroup v2 " + g.dirs[""]
	}
	if d, ok := g.dirs["memory"]; ok {
		return "cgroup v1 " + d
	}
	return "cgroup v1"
}

// dir is the directory of controller c ("" when the group has none).
func (g *Group) dir(c string) string {
	if g.v2 {
		return g.dirs[""]
	}
	return g.dirs[c]
}

// FromPid finds the cgroup of a running process (a container's init).
func FromPid(pid int) (*Group, error) {
	lines, err := procfs.Cgroups(pid)
	if err != nil {
		return nil, fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	return groupOf(lines, V2())
}

// parseProcCgroup reads /proc/PID/cgroup: "4:memory:/docker/ID" lines (v1,
// possibly "cpu,cpuacct" joined) or "0::/path" (v2).
func parseProcCgroup(data string, v2 bool) (*Group, error) {
	return groupOf(procfs.ParseCgroups(data), v2)
}

// groupOf is the group of a process's cgroup lines: its v2 directory, or
// a directory per v1 controller mounted on its own.
func groupOf(lines []procfs.CgroupLine, v2 bool) (*Group, error) {
	g := &Group{v2: v2, dirs: map[string]string{}}
	for _, l := range lines {
		if v2 {
			if l.Controllers == "" {
				g.dirs[""] = filepath.Join(Root, l.Path)
			}
			continue
		}
		for _, c := range strings.Split(l.Controllers, ",") {
			if mnt := v1Mount(c); mnt != "" {
				g.dirs[c] = filepath.Join(mnt, l.Path)
			}
		}
	}
	if len(g.dirs) == 0 {
		return nil, errors.New("no cgroup found in /proc/PID/cgroup")
	}
	return g, nil
}

// v1Mount is the mount point of a v1 controller ("" if it is not mounted
// on its own or joined with another, as cpu,cpuacct).
func v1Mount(controller string) string {
	mounts, _ := procfs.Mounts()
	for _, m := range mounts {
		if m.FSType == "cgroup" && m.HasOption(controller) {
			return m.Point
		}
	}
	return ""
}

// Remove deletes the directories of a group New made (they must be empty:
// its processes gone). A group found by FromPid is not ours to remove.
func (g *Group) Remove() error {
	if g == nil || !g.owned {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, d := range g.dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readInt reads a file holding one integer ("max" is -1).
func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return -1, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// readKV reads "key value" lines (memory.stat, cpu.stat, memory.events).
func readKV(path string) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[f[0]] = n
		}
	}
	return out
}
