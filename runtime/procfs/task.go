package procfs

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// What /proc says of a process's threads (its tasks) and of the children
// they started.

// Tasks lists the thread ids of process pid (/proc/PID/task), in the
// kernel's order; a thread that exits meanwhile may be missing.
func Tasks(pid int) ([]int, error) {
	ents, err := os.ReadDir(taskDir(pid))
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, err
}

func taskDir(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/task" }

func taskFile(pid, tid int, name string) string {
	return taskDir(pid) + "/" + strconv.Itoa(tid) + "/" + name
}

// ThreadsCPU is the CPU time of pid's live threads, the sum of their
// schedstat run times (ns). Threads that exited are gone from task/ and
// from this sum: /proc/PID/stat's ticks count them (ReadProc keeps the
// larger of the two).
func ThreadsCPU(pid int) (time.Duration, error) {
	tids, err := Tasks(pid)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, tid := range tids {
		ns, err := schedRun(taskFile(pid, tid, "schedstat"))
		if errors.Is(err, errExited) {
			continue
		}
		if err != nil {
			return 0, err
		}
		sum += ns
	}
	return time.Duration(sum), nil
}

// errExited: a task's file could not be read; the task exited.
var errExited = errors.New("the task exited")

// schedRun is the run time (ns) a schedstat file gives first.
func schedRun(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, errExited
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, fmt.Errorf("%s: empty", path)
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return ns, nil
}

// ContextSwitches is the context switches, voluntary and not, of pid's
// live threads so far (each task's status).
func ContextSwitches(pid int) (int64, error) {
	tids, err := Tasks(pid)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, tid := range tids {
		if s, ok := taskSwitches(pid, tid); ok {
			n += s
		}
	}
	return n, nil
}

// taskSwitches sums voluntary_ctxt_switches and nonvoluntary_ctxt_switches
// of one task's status; false when it exited.
func taskSwitches(pid, tid int) (int64, bool) {
	data, err := os.ReadFile(taskFile(pid, tid, "status"))
	if err != nil {
		return 0, false
	}
	var n int64
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches" {
			x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			n += x
		}
	}
	return n, true
}

// ChildPids lists the children of process pid, from each of its threads'
// children file (Linux 3.5 and later, CONFIG_PROC_CHILDREN), or from a
// scan of /proc where there is none; none when pid is gone.
func ChildPids(pid int) []int {
	tids, err := Tasks(pid)
	if err != nil {
		return nil
	}
	var out []int
	for _, tid := range tids {
		data, err := os.ReadFile(taskFile(pid, tid, "children"))
		if os.IsNotExist(err) {
			return Children()[pid]
		}
		for _, f := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
