package child

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// walkEvery is how often the supervisor walks benchbook's process tree
// when no cgroup holds the children: 0.8 % of a core with a dozen
// children at 250 ms, 1.7 % at 100 ms (measured at load 13). A process orphaned and adopted by
// benchbook less than this before benchbook is SIGKILLed, with neither
// the marker nor a group of ours, is the one the layers miss.
const walkEvery = 250 * time.Millisecond

// A tree is what the supervisor saw below benchbook: every process,
// by pid and start time (a pid is reused), except the helpers (which must
// outlive benchbook) and their descendants. benchbook is a child
// subreaper (adopt_linux.go): what its children orphan stays below it.
type tree struct {
	root int            // benchbook
	self int            // the supervisor, a child of root
	seen map[int]uint64 // pid -> start time
	kept map[int]uint64 // helpers found, pid -> start time: not walked
}

// newTree watches the supervisor's parent, when it is the benchbook that
// marker names (the token starts with its pid); nil when benchbook is
// gone already (the parent is then init or another subreaper).
func newTree(marker string) *tree {
	_, token, _ := strings.Cut(marker, "=")
	pid, err := strconv.Atoi(strings.SplitN(token, "-", 2)[0])
	if err != nil || pid != os.Getppid() {
		return nil
	}
	t := &tree{root: pid, self: os.Getpid(), seen: map[int]uint64{}, kept: map[int]uint64{}}
	t.walk()
	return t
}

// walk adds every process now below root to seen.
func (t *tree) walk() {
	queue := procfs.ChildPids(t.root)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if pid == t.self {
			continue
		}
		st, err := procfs.ReadStat(pid)
		if err != nil || st.Dead() {
			continue
		}
		if start, ok := t.kept[pid]; ok && start == st.StartTime {
			continue
		}
		if start, ok := t.seen[pid]; !ok || start != st.StartTime {
			if helper(pid) {
				t.kept[pid] = st.StartTime
				continue
			}
			t.seen[pid] = st.StartTime
		}
		queue = append(queue, procfs.ChildPids(pid)...)
	}
}

// helper says whether pid is one of benchbook's helpers (ModeCommand
// gave it HelperVar and no marker): the container reaper must outlive
// benchbook, and so must a benchbook's own supervisor.
func helper(pid int) bool {
	env, _ := procfs.Environ(pid)
	has := func(name string) bool {
		return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	}
	return has(HelperVar) && !has(MarkerVar)
}

// kill sends SIGKILL to every process of seen still running as itself,
// and to its children, noting them, and returns how many it signalled.
func (t *tree) kill() int {
	n := 0
	var queue []int
	for pid := range t.seen {
		queue = append(queue, pid)
	}
	done := map[int]bool{}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if done[pid] || pid == t.self {
			continue
		}
		done[pid] = true
		st, err := procfs.ReadStat(pid)
		if err != nil || st.Dead() {
			continue
		}
		if start, ok := t.seen[pid]; ok && start != st.StartTime {
			continue // another process now has that pid
		}
		t.seen[pid] = st.StartTime
		_ = syscall.Kill(pid, syscall.SIGKILL)
		n++
		queue = append(queue, procfs.ChildPids(pid)...)
	}
	return n
}
