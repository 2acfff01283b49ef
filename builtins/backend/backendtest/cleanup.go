package backendtest

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// helperEnv names the kind a re-executed test binary starts for the
// cleanup test; it holds the handle until the test kills it.
const helperEnv = "BACKENDTEST_CLEANUP"

// inHelper is the kind this test binary is the cleanup helper of, or "".
func inHelper() string { return os.Getenv(helperEnv) }

// InHelper reports whether this test binary runs as the cleanup test's
// helper: a TestMain with costly setup of its own can skip it.
func InHelper() bool { return inHelper() != "" }

// testCleanup starts, in a re-executed test binary (a benchbook), a
// handle of the kind; SIGKILLs that benchbook; and waits for every process
// it had started (its descendants, and the handle's .pid and its tree: a
// container's init is the engine's child, not benchbook's) to be gone.
func testCleanup(t *testing.T, k Kind) {
	var pattern []string
	for _, part := range strings.Split(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd, line := StartHelper(t, strings.Join(pattern, "/"), helperEnv+"="+k.Name)
	f := strings.Fields(line)
	if strings.TrimSpace(line) == "PASS" {
		// The helper's test ended without starting the handle: it skipped
		// (a tool this machine lacks; under CI that fails instead), as the
		// kind's other faces do here.
		t.Skipf("the helper started no %s: it skipped (see the start face's skip for why)", k.Name)
	}
	if len(f) == 0 || f[0] != "BACKENDTEST" {
		t.Fatalf("the helper said %q", line)
	}
	procs := map[int]uint64{} // pid -> start time: a pid reused later is another process
	for _, s := range f[1:] {
		pid, _ := strconv.Atoi(s)
		if st, err := procfs.ReadStat(pid); err == nil && pid > 0 {
			procs[pid] = st.StartTime
		}
	}
	if len(procs) == 0 {
		t.Skipf("a %s starts no process: nothing can outlive benchbook", k.Name)
	}
	t.Logf("the helper (pid %d) runs %d processes; SIGKILL", cmd.Process.Pid, len(procs))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := running(procs)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running 30 s after benchbook was killed: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// running lists the processes of procs that still run.
func running(procs map[int]uint64) []string {
	var left []string
	for pid, start := range procs {
		if st, err := procfs.ReadStat(pid); err == nil && !st.Dead() && st.StartTime == start {
			left = append(left, fmt.Sprintf("%d %q", pid, procfs.Cmdline(pid)))
		}
	}
	return left
}

// runHelper is the cleanup test in the helper: it starts the handle,
// prints the processes it runs and waits to be killed.
func runHelper(t *testing.T, k Kind, kind string) {
	if kind != k.Name {
		t.Fatalf("the helper of %s runs the suite of %s", kind, k.Name)
	}
	s := newSession(t, k)
	h := s.start(k)
	pids := procfs.TreePids(os.Getpid())[1:] // our descendants, supervisor and all
	if v, _ := h.Attr("pid"); v != nil {
		if pid, err := strconv.Atoi(v.String()); err == nil {
			pids = append(pids, procfs.TreePids(pid)...)
		}
	}
	fmt.Print("BACKENDTEST")
	for _, p := range pids {
		fmt.Printf(" %d", p)
	}
	fmt.Println()
	select {}
}
