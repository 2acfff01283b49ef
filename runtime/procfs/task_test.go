package procfs

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// onLockedThread runs f on an OS thread of its own, passing its id.
func onLockedThread(f func(tid int)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f(unix.Gettid())
	}()
	<-done
}

// threadRusage is getrusage(RUSAGE_THREAD) of the calling thread.
func threadRusage(t *testing.T) unix.Rusage {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return ru
}

// TestTaskSwitchesAgreeWithGetrusage: a thread that slept 20 times is
// one of Tasks; the context switches /proc gives it lie between what
// getrusage(RUSAGE_THREAD), which reads the same counters through a
// system call, says before and after; the process's sum holds them.
func TestTaskSwitchesAgreeWithGetrusage(t *testing.T) {
	onLockedThread(func(tid int) {
		for range 20 {
			time.Sleep(time.Millisecond)
		}
		tids, err := Tasks(os.Getpid())
		if err != nil || !slices.Contains(tids, tid) {
			t.Errorf("Tasks(%d) = %v, %v: the thread %d is missing", os.Getpid(), tids, err, tid)
		}
		before := threadRusage(t)
		got, ok := taskSwitches(os.Getpid(), tid)
		after := threadRusage(t)
		lo, hi := before.Nvcsw+before.Nivcsw, after.Nvcsw+after.Nivcsw
		if !ok || got < lo || got > hi || lo < 20 {
			t.Errorf("the thread's switches: /proc %d (%v), getrusage %d..%d (20 sleeps)", got, ok, lo, hi)
		}
		if all, err := ContextSwitches(os.Getpid()); err != nil || all < got {
			t.Errorf("ContextSwitches = %d, %v; one thread alone made %d", all, err, got)
		}
	})
	if _, err := ContextSwitches(1 << 30); err == nil {
		t.Errorf("ContextSwitches of no process: no error")
	}
}

// TestThreadsCPUCountsAThreadsBurn: 150 ms of CPU burnt on one thread
// shows in its schedstat run time as getrusage(RUSAGE_THREAD) counts it,
// and ThreadsCPU, the sum over the process's threads, holds it.
func TestThreadsCPUCountsAThreadsBurn(t *testing.T) {
	onLockedThread(func(tid int) {
		cpu := func(ru unix.Rusage) time.Duration {
			return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		r0 := threadRusage(t)
		s0, err0 := schedRun(taskFile(os.Getpid(), tid, "schedstat"))
		x := 0
		for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
			x++
		}
		_ = x
		s1, err1 := schedRun(taskFile(os.Getpid(), tid, "schedstat"))
		r1 := threadRusage(t)
		if err0 != nil || err1 != nil {
			t.Fatal(err0, err1)
		}
		got, want := time.Duration(s1-s0), cpu(r1)-cpu(r0)
		t.Logf("schedstat %v, getrusage %v", got, want)
		if want < 50*time.Millisecond {
			t.Skipf("the burn got only %v of CPU; too busy a box to tell", want)
		}
		if got < want*9/10 || got > want*11/10+time.Millisecond {
			t.Errorf("the thread's schedstat grew %v, getrusage %v", got, want)
		}
		if all, err := ThreadsCPU(os.Getpid()); err != nil || all < time.Duration(s1) {
			t.Errorf("ThreadsCPU = %v, %v; one thread alone ran %v", all, err, time.Duration(s1))
		}
	})
}

// TestChildPidsListsStartedChildren: two children this test starts are
// among ChildPids, and every pid it lists has this process for parent
// (stat's ppid, what the scan fallback reads).
func TestChildPidsListsStartedChildren(t *testing.T) {
	var pids []int
	for range 2 {
		cmd := exec.Command("sleep", "5")
		if err := cmd.Start(); err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	got := ChildPids(os.Getpid())
	for _, p := range pids {
		if !slices.Contains(got, p) {
			t.Errorf("ChildPids = %v misses the child %d", got, p)
		}
	}
	for _, p := range got {
		if st, err := ReadStat(p); err == nil && st.PPID != os.Getpid() {
			t.Errorf("ChildPids lists %d, whose parent is %d", p, st.PPID)
		}
	}
	if got := ChildPids(1 << 30); got != nil {
		t.Errorf("ChildPids of no process = %v", got)
	}
}
