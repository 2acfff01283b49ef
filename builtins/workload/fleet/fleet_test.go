package fleet_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
)

func opts(l fleettest.Load) fleet.Options {
	return fleet.Options{Duration: time.Duration(l.Ms) * time.Millisecond, Window: time.Second, Timeout: time.Second, Hang: 3 * time.Second}
}

// testLocal runs the test binary as local agents.
func testLocal() *fleet.Local { return &fleet.Local{Binary: os.Args[0]} }

func TestMergeEqualsOneHistogram(t *testing.T) {
	for _, n := range []int{1, 2, 5, 64} {
		l := fleettest.Load{Values: 3000, Seed: uint64(n), Windows: 4, DieAgent: -1}
		var outs []fleet.Outcome
		var agents []int
		for i := range n {
			outs = append(outs, fleet.Outcome{Name: "a", Report: fleettest.Fill(l, i, time.Second)})
			agents = append(agents, i)
		}
		m, err := fleet.Merge(outs, fleet.MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		all, ok := fleettest.Oracle(l, agents)
		fleettest.SameDistribution(t, m.Hist, all)
		if m.Count != ok || m.OK.TotalCount() != ok || m.Intended != int64(n*l.Values) {
			t.Fatalf("%d agents: count %d ok hist %d intended %d, want %d %d %d", n, m.Count, m.OK.TotalCount(), m.Intended, ok, ok, n*l.Values)
		}
		var win int64
		for _, h := range m.WindowHists {
			win += h.TotalCount()
		}
		if win != all.TotalCount() || len(m.Windows) != l.Windows {
			t.Fatalf("%d agents: windows hold %d values in %d windows, want %d in %d", n, win, len(m.Windows), all.TotalCount(), l.Windows)
		}
	}
}

// An agent that began a window late has its windows moved by one; one that
// began on time stays.
func TestMergeAlignsWindows(t *testing.T) {
	start := time.Unix(1000, 0)
	l := fleettest.Load{Values: 100, Seed: 1, Windows: 2, DieAgent: -1}
	mk := func(agent int, began time.Time, offset time.Duration) fleet.Outcome {
		rep := fleettest.Fill(l, agent, 2*time.Second)
		rep.MeasureStart, rep.ClockOffset = began.Add(offset).UnixNano(), int64(offset)
		return fleet.Outcome{Name: "a", Report: rep}
	}
	m, err := fleet.Merge([]fleet.Outcome{
		mk(0, start.Add(20*time.Millisecond), 0),
		mk(1, start.Add(time.Second), 300*time.Millisecond), // late by a window, clock 300 ms ahead
	}, fleet.MergeOptions{Start: start, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Windows) != 3 {
		t.Fatalf("%d windows, want 3 (agent 1 one window late)", len(m.Windows))
	}
	if got, want := m.WindowHists[0].TotalCount(), int64(50); got != want {
		t.Fatalf("window 0 holds %d, want agent 0's first half (%d)", got, want)
	}
}

func TestLocalFleetMergesLosslessly(t *testing.T) {
	l := fleettest.Load{Values: 20000, Seed: 42, Ms: 600, Windows: 3, DieAgent: -1}
	m, err := fleet.Run(context.Background(), testLocal(), fleettest.Specs(t, l, 2), opts(l))
	if err != nil {
		t.Fatal(err)
	}
	all, ok := fleettest.Oracle(l, []int{0, 1})
	fleettest.SameDistribution(t, m.Hist, all)
	if m.Count != ok || m.Incomplete || len(m.Rows) != 2 {
		t.Fatalf("count %d (want %d), incomplete %v, %d rows", m.Count, ok, m.Incomplete, len(m.Rows))
	}
	var sum int64
	for _, r := range m.Rows {
		sum += r.Count
		if r.Status != "ok" || r.ClockOffset.Abs() > 50*time.Millisecond || r.Host == "" {
			t.Fatalf("row %+v", r)
		}
	}
	if sum != m.Count {
		t.Fatalf("rows sum to %d, merged count %d", sum, m.Count)
	}
}

func TestAgentThatDiesIsNamed(t *testing.T) {
	t.Parallel()
	l := fleettest.Load{Values: 1000, Seed: 3, Ms: 1500, Windows: 1, DieAgent: 1, DieMs: 300}
	m, err := fleet.Run(context.Background(), testLocal(), fleettest.Specs(t, l, 2), opts(l))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Incomplete || m.Rows[1].Status != "died: exit status 3" || m.Rows[0].Status != "ok" {
		t.Fatalf("incomplete %v, rows %q %q", m.Incomplete, m.Rows[0].Status, m.Rows[1].Status)
	}
	all, _ := fleettest.Oracle(l, []int{0})
	fleettest.SameDistribution(t, m.Hist, all) // agent 0's data kept, nothing of agent 1's
	if !strings.Contains(strings.Join(m.Warnings, "\n"), "incomplete: agent local/1 died") {
		t.Fatalf("warnings %q", m.Warnings)
	}
	if len(m.Trips) != 1 || !m.Trips[0].Fatal || m.Trips[0].Source != "agent local/1" || m.Trips[0].At <= 0 {
		t.Fatalf("trips %+v, want one fatal trip for agent local/1 during the window", m.Trips)
	}
	if n := strings.Count(strings.Join(m.Warnings, "\n"), "INVALID"); n != 1 {
		t.Errorf("the lost agent's trip is said %d times in the warnings, want once: %q", n, m.Warnings)
	}
}

// An agent stopped by someone else (SIGTERM: a pod deleted or evicted, a
// box shutting down) reports what it measured as interrupted; this run did
// not ask it to stop, so its window is partial: the agent is named, the run
// is incomplete and keeps the others' data. Before, its row read
// "interrupted" and the run was merged whole with a third of one agent's
// window (on a real cluster, a pod deleted mid-run).
func TestAgentStoppedByOthersIsNamed(t *testing.T) {
	t.Parallel()
	l := fleettest.Load{Values: 1000, Seed: 7, Ms: 4000, Windows: 1, DieAgent: -1}
	o := opts(l)
	hl := &hookLauncher{Launcher: testLocal()}
	o.OnStart = func(at time.Time) {
		time.AfterFunc(time.Until(at)+500*time.Millisecond, func() { _ = syscall.Kill(hl.agents[1].Pid, syscall.SIGTERM) })
	}
	m, err := fleet.Run(context.Background(), hl, fleettest.Specs(t, l, 2), o)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Incomplete || m.Interrupted || m.Rows[0].Status != "ok" || !strings.HasPrefix(m.Rows[1].Status, "stopped before the end of the run") {
		t.Fatalf("incomplete %v interrupted %v, rows %q %q", m.Incomplete, m.Interrupted, m.Rows[0].Status, m.Rows[1].Status)
	}
	all, _ := fleettest.Oracle(l, []int{0})
	fleettest.SameDistribution(t, m.Hist, all) // agent 0's data alone
	assertGone(t, hl.agents)
}

// A stopped agent (SIGSTOP: a frozen VM, a swapped-out box) is hung: named,
// killed, and the run keeps the other's data. It is stopped half a second
// into the run, after the handshake: stopped at a time after its launch,
// on a loaded box it was stopped before its hello, and the run failed
// ("no hello message within 30s"), which is another test.
func TestAgentThatHangsIsNamedAndKilled(t *testing.T) {
	l := fleettest.Load{Values: 1000, Seed: 4, Ms: 4000, Windows: 1, DieAgent: -1}
	hl := &hookLauncher{Launcher: testLocal()}
	o := opts(l)
	o.Hang = 1500 * time.Millisecond
	o.OnStart = func(at time.Time) {
		time.AfterFunc(time.Until(at)+500*time.Millisecond, func() { _ = syscall.Kill(pidOf(hl.agents[1]), syscall.SIGSTOP) })
	}
	m, err := fleet.Run(context.Background(), hl, fleettest.Specs(t, l, 2), o)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Incomplete || !strings.HasPrefix(m.Rows[1].Status, "hung: nothing from it for 1.5s") || m.Rows[0].Status != "ok" {
		t.Fatalf("rows %q %q", m.Rows[0].Status, m.Rows[1].Status)
	}
	assertGone(t, hl.agents)
}

// Ctrl-C a second into the run stops every agent within 5 s, each
// reporting what it measured. The second counts from the start instant:
// counted from the launch, on a loaded box it came before the agents had
// said hello, and the run failed with "context canceled" instead.
func TestCtrlCStopsEveryAgent(t *testing.T) {
	t.Parallel()
	l := fleettest.Load{Values: 1000, Seed: 5, Ms: 20000, Windows: 1, DieAgent: -1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled atomic.Int64 // UnixNano of the cancel
	o := opts(l)
	o.OnStart = func(at time.Time) {
		time.AfterFunc(time.Until(at)+time.Second, func() { cancelled.Store(time.Now().UnixNano()); cancel() })
	}
	hl := &hookLauncher{Launcher: testLocal()}
	m, err := fleet.Run(ctx, hl, fleettest.Specs(t, l, 3), o)
	if err != nil {
		t.Fatal(err)
	}
	if c := cancelled.Load(); c == 0 {
		t.Fatalf("the run ended before the Ctrl-C")
	} else if el := time.Since(time.Unix(0, c)); el > 5*time.Second {
		t.Fatalf("Ctrl-C took %s to stop the fleet", el)
	}
	if !m.Interrupted || m.Incomplete {
		t.Fatalf("interrupted %v incomplete %v rows %+v", m.Interrupted, m.Incomplete, m.Rows)
	}
	for _, r := range m.Rows {
		if r.Status != "interrupted" {
			t.Fatalf("row %s: %q, want interrupted (it reported what it measured)", r.Name, r.Status)
		}
	}
	assertGone(t, hl.agents)
}

func TestClockOffsetRefused(t *testing.T) {
	t.Setenv("FLEET_TEST_SKEW", "400ms")
	l := fleettest.Load{Values: 10, Seed: 6, Ms: 100, Windows: 1, DieAgent: -1}
	_, err := fleet.Run(context.Background(), testLocal(), fleettest.Specs(t, l, 1), opts(l))
	if err == nil || !strings.Contains(err.Error(), "more than a tenth of the 1s window") || !strings.Contains(err.Error(), "allow_clock_offset") {
		t.Fatalf("err = %v", err)
	}
	o := opts(l)
	o.AllowClockOffset = true
	m, err := fleet.Run(context.Background(), testLocal(), fleettest.Specs(t, l, 1), o)
	if err != nil {
		t.Fatal(err)
	}
	if off := m.Rows[0].ClockOffset; off < 350*time.Millisecond || off > 450*time.Millisecond {
		t.Fatalf("estimated offset %s, the agent's clock is 400ms ahead", off)
	}
	if m.Rows[0].LateStart > 100*time.Millisecond {
		t.Fatalf("agent started %s late: the start instant was not moved onto its clock", m.Rows[0].LateStart)
	}
}

func TestSplit(t *testing.T) {
	s, err := fleet.Split(10, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, sh := range s {
		total += sh.Clients
		if sh.SeqBase != int64(i)*fleet.SeqRange {
			t.Fatalf("agent %d seq base %d", i, sh.SeqBase)
		}
	}
	if total != 10 || s[0].Clients != 3 || s[3].Clients != 2 {
		t.Fatalf("split %+v", s)
	}
	if _, err := fleet.Split(3, 0, 4); err == nil || !strings.Contains(err.Error(), "clients = 3 cannot be divided across 4 agents") {
		t.Fatalf("err = %v", err)
	}
	r, _ := fleet.Split(0, 1000, 3)
	if sum := r[0].Rate + r[1].Rate + r[2].Rate; sum < 999.999 || sum > 1000.001 {
		t.Fatalf("rates sum to %g", sum)
	}
}

// hookLauncher keeps its agents and calls after (if set) once they are up.
type hookLauncher struct {
	fleet.Launcher
	after  func([]*fleet.Agent)
	agents []*fleet.Agent
}

func (h *hookLauncher) Launch(ctx context.Context, specs []fleet.Spec) ([]*fleet.Agent, error) {
	a, err := h.Launcher.Launch(ctx, specs)
	h.agents = a
	if err == nil && h.after != nil {
		h.after(a)
	}
	return a, err
}

func pidOf(a *fleet.Agent) int { return a.Pid }

// assertGone fails if any agent process is still there.
func assertGone(t *testing.T, agents []*fleet.Agent) {
	t.Helper()
	for _, a := range agents {
		pid := a.Pid
		if pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil {
			if st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !strings.Contains(string(st), ") Z ") {
				t.Errorf("agent %s (pid %d) is still running", a.Name, pid)
			}
		}
	}
}

func TestMain(m *testing.M) {
	hidden.Run() // the supervisor re-executes the test binary
	fleettest.AgentMain()
	os.Exit(m.Run())
}

// Pinned local agents run every thread on their CPU set.
func TestLocalAgentsPinned(t *testing.T) {
	l := fleettest.Load{Values: 100, Seed: 8, Ms: 1500, Windows: 1, DieAgent: -1}
	masks := make(chan []string, 1)
	hl := &hookLauncher{Launcher: &fleet.Local{Binary: os.Args[0], CPUs: []string{"0"}}, after: func(agents []*fleet.Agent) {
		time.AfterFunc(time.Second, func() { masks <- threadMasks(agents[0].Pid) })
	}}
	if _, err := fleet.Run(context.Background(), hl, fleettest.Specs(t, l, 1), opts(l)); err != nil {
		t.Fatal(err)
	}
	got := <-masks
	if len(got) < 2 {
		t.Fatalf("read %d threads' masks", len(got))
	}
	for _, m := range got {
		if m != "0" {
			t.Fatalf("a thread of the pinned agent may run on CPUs %q, want 0 (all: %q)", m, got)
		}
	}
}

// threadMasks are the Cpus_allowed_list of every thread of pid.
func threadMasks(pid int) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, _ := os.ReadDir(dir)
	var out []string
	for _, tid := range tids {
		b, _ := os.ReadFile(dir + "/" + tid.Name() + "/status")
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}

// The coordinator's heartbeat keeps agents going through a run longer than
// the silence after which they stop on their own.
func TestRunLongerThanSilence(t *testing.T) {
	l := fleettest.Load{Values: 500, Seed: 9, Ms: 4000, Windows: 1, DieAgent: -1}
	specs := fleettest.Specs(t, l, 2)
	for i := range specs {
		specs[i].Silence = int64(2 * time.Second) // twice the heartbeat
	}
	m, err := fleet.Run(context.Background(), testLocal(), specs, opts(l))
	if err != nil {
		t.Fatal(err)
	}
	if m.Interrupted || m.Incomplete || strings.Contains(strings.Join(m.Warnings, "\n"), "silent") {
		t.Fatalf("interrupted %v incomplete %v warnings %q", m.Interrupted, m.Incomplete, m.Warnings)
	}
}
