package child

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// Layer 4, for hosts without a writable cgroup v2: benchbook is a child
// subreaper (PR_SET_CHILD_SUBREAPER), so a descendant orphaned below it
// (a daemon's "setsid env -i sleep &", which leaves the process group and
// sheds the marker) is adopted by benchbook instead of init and stays in
// its process tree for as long as benchbook lives; the supervisor walks
// that tree and kills what it saw when benchbook dies (supervise_linux.go).
//
// An adopted process that exits is benchbook's zombie, which no exec.Cmd
// waits for: reapAdopted reaps those. It must not reap a child that an
// exec.Cmd will wait for, or that Wait fails: the children started here
// are registered (pid and start time) before their zombie can be seen,
// and a child started elsewhere (git, pg_controldata) stays in
// benchbook's own process group, where no adopted process is.

// subreaper makes this process a child subreaper and starts reaping the
// adopted. It reports whether it is one.
func subreaper() bool {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return false
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	go func() {
		for range sigs {
			reapAdopted()
		}
	}()
	return true
}

const prSetChildSubreaper = 36 // linux/prctl.h

// started are the children Start started: pid -> start time. startMu is
// held from before a fork until its child is in started, and while
// reapAdopted decides, so that a child that exits at once is never taken
// for an adopted one.
var (
	startMu sync.Mutex
	started = map[int]uint64{}
)

// register notes cmd's process, which has just started.
func register(pid int) {
	if st, err := procfs.ReadStat(pid); err == nil {
		started[pid] = st.StartTime
	}
}

// reapAdopted waits for every zombie child of this process that it did
// not start itself.
func reapAdopted() {
	startMu.Lock()
	defer startMu.Unlock()
	own := syscall.Getpgrp()
	for _, pid := range procfs.ChildPids(os.Getpid()) {
		st, err := procfs.ReadStat(pid)
		if err != nil || !st.Dead() {
			continue
		}
		if t, ok := started[pid]; ok && t == st.StartTime {
			continue // an exec.Cmd waits for it
		}
		if pg, err := syscall.Getpgid(pid); err != nil || pg == own {
			continue // started here without Start (git): its Cmd waits
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}
