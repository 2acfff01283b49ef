package profile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// The hot server's arm A spends five times the work in hotA that it
// spends in hotB: a profile of it under load must say so, with the frames
// named and the samples standing for the CPU the process used.
func TestPerfSamplesHotServer(t *testing.T) {
	timing.Only(t, "the CPU the samples stand for against /proc's: the race pass's three packages at once on 2 cores starved perf's reader to 0.77 of the CPU twice in a row")
	needPerf(t)
	// A box loaded far past its cores starves perf's own reader, and the
	// samples can fall short of the CPU: the figures then warn (below
	// MinCoverage), and the test looks again, once, before it calls it.
	for attempt := 1; ; attempt++ {
		fig, busy := perfSamplesHotServer(t)
		if fig.Coverage >= MinCoverage && fig.Coverage <= MaxCoverage {
			return
		}
		if !slices.ContainsFunc(fig.Warnings, func(w string) bool { return strings.Contains(w, "of the target's CPU") }) {
			t.Errorf("coverage %.2f and no warning in the figures: %q", fig.Coverage, fig.Warnings)
		}
		if attempt == 2 || !busy {
			t.Fatalf("the samples stand for %.2f of the process's CPU (attempt %d, load above the cores: %v)", fig.Coverage, attempt, busy)
		}
		t.Logf("attempt %d: coverage %.2f on a loaded box, once more", attempt, fig.Coverage)
	}
}

func perfSamplesHotServer(t *testing.T) (fig *Figures, busy bool) {
	h := startHotServer(t, "A")
	rec, err := StartPerf(context.Background(), Target{Name: "hotserver", Lister: ProcessTree(h.pid())}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpu0 := cpuUs(t, h.pid())
	n := loadN(t, h.addr, 2, 1500, 10*time.Second)
	cpu1 := cpuUs(t, h.pid())
	p, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	fns := functionsByName(p)
	a, b := fns["main.hotA"], fns["main.hotB"]
	t.Logf("%d requests, %d samples, window %s, hotA %.3f, hotB %.3f, resolved %.3f, leaves %.3f, pids %v, warnings %q",
		n, p.Samples, p.Window, a.Total, b.Total, p.ResolvedShare(), p.ResolvedLeafShare(), p.PIDs, p.Warnings)
	if p.Samples < 50 {
		t.Fatalf("%d samples in %d requests", p.Samples, n)
	}
	if !(a.Total > 2.5*b.Total && b.Total > 0) {
		t.Errorf("hotA %.3f, hotB %.3f of the samples: want hotA about 5 times hotB", a.Total, b.Total)
	}
	// hotA calls nothing, but a timer interrupt taken in it puts kernel
	// frames above it.
	if a.Self < 0.7*a.Total {
		t.Errorf("hotA is a leaf: self %.3f, total %.3f", a.Self, a.Total)
	}
	if p.ResolvedLeafShare() < 0.9 {
		t.Errorf("%.3f of the leaves resolved in a Go binary", p.ResolvedLeafShare())
	}
	fig, err = p.Figures(Cost{Requests: n, CPUUs: cpu1 - cpu0})
	if err != nil {
		t.Fatal(err)
	}
	// /proc's ticks are 10 ms; the window brackets the load.
	t.Logf("coverage %.3f, %.1f µs/req, warnings %q", fig.Coverage, fig.UsPerReq, fig.Warnings)
	return fig, loadAboveCores()
}

func TestPerfMissingNamesThePackage(t *testing.T) {
	for _, bin := range []string{"/nonexistent/perf", "perf-that-is-not-installed"} {
		_, err := StartPerf(context.Background(), Target{Lister: PIDs(os.Getpid())}, PerfOptions{Perf: bin})
		if err == nil || !strings.Contains(err.Error(), "linux-perf") {
			t.Errorf("perf = %q: error %v, want one naming linux-perf", bin, err)
		}
	}
}

// asNobody writes a perf wrapper that runs the real perf as nobody, so the
// kernel's refusal is a real one.
func asNobody(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run perf as another user")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		needs.Missing(t, "perf", "apt-get install linux-perf")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		needs.Missing(t, "setpriv", "apt-get install util-linux")
	}
	w := filepath.Join(t.TempDir(), "perf")
	script := "#!/bin/sh\nexec setpriv --reuid=nobody --regid=nogroup --clear-groups " + perf + " \"$@\"\n"
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// A user the kernel does not let sample the target gets an error naming
// the sysctl, never an empty profile.
func TestPerfForbiddenNamesTheSysctl(t *testing.T) {
	perf := asNobody(t)
	if paranoidLevel() < 1 {
		t.Skipf("kernel.perf_event_paranoid = %d lets anyone sample", paranoidLevel())
	}
	sleeper := exec.Command("sleep", "5")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	_, err := StartPerf(context.Background(), Target{Name: "a root process", Lister: PIDs(sleeper.Process.Pid)}, PerfOptions{Perf: perf})
	if err == nil || !strings.Contains(err.Error(), "kernel.perf_event_paranoid") {
		t.Fatalf("error %v, want one naming kernel.perf_event_paranoid", err)
	}
	if !strings.Contains(err.Error(), "a root process") {
		t.Errorf("error %v does not name the target", err)
	}
}

func TestPerfNoProcess(t *testing.T) {
	needPerf(t)
	_, err := StartPerf(context.Background(), Target{Name: "gone", Lister: PIDs(1 << 30)}, PerfOptions{})
	if err == nil || !strings.Contains(err.Error(), "gone has no running process") {
		t.Fatalf("error %v", err)
	}
}

// A process the target starts in the window (a PostgreSQL backend for a
// new connection) is sampled through perf's inheritance, by the one perf
// already running, and counted once.
func TestPerfFollowsChildrenStartedInTheWindow(t *testing.T) {
	needPerf(t)
	// The shell forks its busy child only once sampling is on (perf can
	// take seconds to start on a busy box).
	gate := filepath.Join(t.TempDir(), "go")
	sh := exec.Command("bash", "-c", `while [ ! -e "$1" ]; do sleep 0.01; done; (now=${EPOCHREALTIME/./}; end=$((now+600000)); while ((${EPOCHREALTIME/./} < end)); do :; done) & wait`, "sh", gate)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
	rec, err := StartPerf(context.Background(), Target{Lister: ProcessTree(sh.Process.Pid)}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sh.Wait(); err != nil {
		t.Fatal(err)
	}
	p, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pids %v, %d samples (%.0f ms), %d perf processes", p.PIDs, p.Samples, float64(p.CPUNs)/1e6, len(rec.procs))
	var others int
	for _, pid := range p.PIDs {
		if pid != sh.Process.Pid {
			others++
		}
	}
	if others == 0 {
		t.Fatalf("no samples of the child: pids %v", p.PIDs)
	}
	if len(rec.procs) != 1 {
		t.Errorf("%d perf processes: the child was followed by inheritance and needs none of its own", len(rec.procs))
	}
	// The child burned 0.6 s of one CPU at most (less on a busy box); a
	// sample counted twice would pass it.
	if cpu := time.Duration(p.CPUNs); cpu > 700*time.Millisecond {
		t.Errorf("samples stand for %s of CPU from a 0.6 s busy loop", cpu)
	}
}

// A process that joins the target outside its tree (a command run in a
// container, seen only by re-reading the lister) gets a perf of its own.
func TestPerfAttachesProcessesThatJoinLater(t *testing.T) {
	needPerf(t)
	first := exec.Command("sleep", "3")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Kill(); first.Wait() }()
	var mu sync.Mutex
	pids := []int{first.Process.Pid}
	lister := func() ([]int, error) { mu.Lock(); defer mu.Unlock(); return slices.Clone(pids), nil }
	rec, err := StartPerf(context.Background(), Target{Lister: lister}, PerfOptions{Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	late := spinner(t, 20*time.Second)
	mu.Lock()
	pids = append(pids, late.Process.Pid)
	mu.Unlock()
	// perf can take seconds to attach on a busy box: sample 0.5 s after.
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		rec.mu.Lock()
		n := len(rec.procs)
		rec.mu.Unlock()
		if n > 1 {
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	p, err := rec.Stop()
	stopSpinners(late)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pids %v, %d samples, %d perf processes, warnings %q", p.PIDs, p.Samples, len(rec.procs), p.Warnings)
	if len(rec.procs) < 2 {
		t.Fatalf("%d perf processes: the late process was not attached", len(rec.procs))
	}
	if !slices.Contains(p.PIDs, late.Process.Pid) || p.Samples < 20 {
		t.Fatalf("late process barely sampled: pids %v, %d samples", p.PIDs, p.Samples)
	}
}

// Every process of a cgroup is sampled, one that joins in the window too,
// and nothing outside it.
func TestPerfCgroup(t *testing.T) {
	needPerf(t)
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	mnt, err := perfEventMount()
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(mnt, fmt.Sprintf("benchbook-proftest-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.Remove(dir) }) // after the spinners' cleanups, which kill them
	// perf -a takes up to a second to start on a busy box: the spinners
	// outlast it, and the window is the 400 ms after it started.
	in := spinner(t, 5*time.Second)
	out := spinner(t, 5*time.Second)
	move := func(pid int) {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	move(in.Process.Pid)
	t0 := time.Now()
	rec, err := StartPerf(context.Background(), Target{Cgroup: dir}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("perf -a took %s to start", time.Since(t0))
	joiner := spinner(t, 5*time.Second)
	move(joiner.Process.Pid)
	time.Sleep(400 * time.Millisecond)
	p, err := rec.Stop()
	stopSpinners(in, out, joiner)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pids %v, %d samples; in %d, joiner %d, out %d; warnings %q", p.PIDs, p.Samples, in.Process.Pid, joiner.Process.Pid, out.Process.Pid, p.Warnings)
	if !slices.Contains(p.PIDs, in.Process.Pid) {
		t.Errorf("no samples of the cgroup's process")
	}
	if !slices.Contains(p.PIDs, joiner.Process.Pid) {
		t.Errorf("no samples of the process that joined the cgroup in the window")
	}
	if slices.Contains(p.PIDs, out.Process.Pid) {
		t.Errorf("samples of the process outside the cgroup")
	}
}

// An interrupt ends the sampling: Stop says so, perf is gone, and nothing
// perf wrote is left in the working or temporary directory.
func TestPerfCancelAndNoFiles(t *testing.T) {
	needPerf(t)
	hotServerBinary(t) // built before TMPDIR points at the directory checked
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("TMPDIR", dir)
	sh := spinner(t, 20*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	rec, err := StartPerf(ctx, Target{Lister: ProcessTree(sh.Process.Pid)}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	if _, err := rec.Stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop after cancel: %v", err)
	}
	for _, p := range rec.procs {
		if p.cmd.ProcessState == nil {
			t.Errorf("perf %d still running", p.cmd.Process.Pid)
		}
	}
	rec2, err := StartPerf(context.Background(), Target{Lister: ProcessTree(sh.Process.Pid)}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := rec2.Stop(); err != nil {
		t.Fatal(err)
	}
	stopSpinners(sh)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

// The size bound stops sampling early and says so; the profile keeps what
// was sampled.
func TestPerfSizeBound(t *testing.T) {
	needPerf(t)
	sp := spinner(t, 20*time.Second)
	rec, err := StartPerf(context.Background(), Target{Lister: PIDs(sp.Process.Pid)}, PerfOptions{MaxBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	// Enough CPU for more samples than 16 KiB hold, however busy the box.
	c0 := cpuUs(t, sp.Process.Pid)
	for end := time.Now().Add(15 * time.Second); cpuUs(t, sp.Process.Pid)-c0 < 1e6 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	p, err := rec.Stop()
	stopSpinners(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples, warnings %q", p.Samples, p.Warnings)
	if len(p.Warnings) == 0 || !strings.Contains(strings.Join(p.Warnings, " "), "bound") {
		t.Errorf("no warning of the bound: %q", p.Warnings)
	}
	if p.Samples == 0 {
		t.Errorf("no samples kept")
	}
	if p.Samples > 300 {
		t.Errorf("%d samples in 16 KiB", p.Samples)
	}
}

// A process two perf processes both follow (a fork in the tick of the
// start is attached again, to be safe) is counted from the first only.
func TestPerfCountsAProcessOnce(t *testing.T) {
	needPerf(t)
	sp := spinner(t, 20*time.Second)
	rec, err := StartPerf(context.Background(), Target{Lister: PIDs(sp.Process.Pid)}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := startPerfProc(rec.bin, append(slices.Clone(rec.args), "-p", itoa(sp.Process.Pid)), DefaultMaxBytes, true)
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.procs, rec.attached = append(rec.procs, again), append(rec.attached, map[int]bool{sp.Process.Pid: true})
	rec.mu.Unlock()
	time.Sleep(500 * time.Millisecond)
	p, err := rec.Stop()
	stopSpinners(sp)
	if err != nil {
		t.Fatal(err)
	}
	count := func(pp *perfProc) (n int64) {
		if _, err := script(context.Background(), rec.bin, pp.out.Bytes(), rec.period, func(*sample) { n++ }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	first, second := count(rec.procs[0]), count(again)
	t.Logf("profile %d samples; the first perf %d, the second %d", p.Samples, first, second)
	if second == 0 {
		t.Fatal("the second perf sampled nothing: the test shows nothing")
	}
	if p.Samples != first {
		t.Errorf("profile has %d samples, the first perf alone %d", p.Samples, first)
	}
}

// An armed recording samples only between Enable and Disable: the CPU its
// samples stand for is the CPU the target used in that window, not before
// or after it, however long perf took to start. The window's edges are
// where perf reads its commands, somewhere between our writing one and its
// acknowledgement (on a loaded box that took 130 ms once): the samples
// stand for at least the CPU used between the acknowledgement of enable
// and the sending of disable, and at most the CPU used between the sending
// of enable and the acknowledgement of disable.
func TestPerfArmedWindow(t *testing.T) {
	timing.Only(t, "the CPU a window's samples stand for against /proc's: the race pass's load put 72 ms of samples in a 151 ms window")
	needPerf(t)
	sp := spinner(t, 30*time.Second)
	pid := sp.Process.Pid
	rec, err := StartPerf(context.Background(), Target{Name: "spinner", Lister: PIDs(pid)}, PerfOptions{Armed: true})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // CPU outside the window
	outer0, outerAt := cpuUs(t, pid), time.Now()
	if err := rec.Enable(); err != nil {
		t.Fatal(err)
	}
	inner0, innerAt := cpuUs(t, pid), time.Now()
	time.Sleep(400 * time.Millisecond)
	inner1, innerFor := cpuUs(t, pid), time.Since(innerAt)
	rec.Disable()
	outer1, outerFor := cpuUs(t, pid), time.Since(outerAt)
	time.Sleep(400 * time.Millisecond) // and after it
	p, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	inner, outer := inner1-inner0, outer1-outer0
	sampled := float64(p.CPUNs) / 1e3
	t.Logf("window %s, %d samples = %.0f µs; the spinner used %.0f µs in the window for sure, %.0f µs at most", p.Window, p.Samples, sampled, inner, outer)
	if inner < 50_000 {
		t.Skipf("the spinner ran %.0f µs in 400 ms: too busy a box to tell", inner)
	}
	if sampled < 0.75*inner || sampled > 1.3*outer {
		t.Errorf("samples stand for %.0f µs, the window had %.0f to %.0f µs of the target's CPU", sampled, inner, outer)
	}
	// The window is timed from the sending of enable to the sending of
	// disable: within the same brackets (perf took 730 ms to acknowledge
	// enable in a fresh clone's race pass).
	if p.Window < innerFor-10*time.Millisecond || p.Window > outerFor+10*time.Millisecond {
		t.Errorf("window %s, want between %s and %s", p.Window, innerFor, outerFor)
	}
}

// An armed recording whose window never opened is an error, not an empty
// profile.
func TestPerfArmedNeverEnabled(t *testing.T) {
	needPerf(t)
	sp := spinner(t, 10*time.Second)
	rec, err := StartPerf(context.Background(), Target{Name: "spinner", Lister: PIDs(sp.Process.Pid)}, PerfOptions{Armed: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Stop(); err == nil || !strings.Contains(err.Error(), "never opened") {
		t.Errorf("Stop of a window never opened: %v", err)
	}
}

// Keep drops the samples of the processes it refuses: perf follows the
// whole tree, the profile keeps the children only.
func TestPerfKeep(t *testing.T) {
	needPerf(t)
	gate := filepath.Join(t.TempDir(), "go")
	sh := exec.Command("bash", "-c", `while [ ! -e "$1" ]; do :; done; (now=${EPOCHREALTIME/./}; end=$((now+300000)); while ((${EPOCHREALTIME/./} < end)); do :; done) & wait`, "sh", gate)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
	root := sh.Process.Pid
	rec, err := StartPerf(context.Background(), Target{Lister: ProcessTree(root), Keep: func(pid int) bool { return pid != root }}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the shell spins on its gate meanwhile
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sh.Wait(); err != nil {
		t.Fatal(err)
	}
	p, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pids %v, %d samples", p.PIDs, p.Samples)
	if slices.Contains(p.PIDs, root) {
		t.Errorf("samples of the refused process %d kept", root)
	}
	if len(p.PIDs) == 0 {
		t.Errorf("no samples of the child")
	}
}

// loadAboveCores says whether the 1-minute load average is above the
// machine's cores.
func loadAboveCores() bool {
	l, err := hostinfo.LoadAvg()
	return err == nil && l[0] > float64(goruntime.NumCPU())
}
