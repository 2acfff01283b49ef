package host

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/procfs"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// spin starts a CPU-bound shell loop that ends by itself after 5 s.
// detached: its parent exits at once, so it is not our descendant.
func spin(t *testing.T, detached bool) int {
	t.Helper()
	loop := `timeout --foreground 5 sh -c 'while :; do :; done'`
	// Its own process group, killed whole: SIGKILL to timeout alone would
	// leave the loop running for ever.
	group := &syscall.SysProcAttr{Setpgid: true}
	if !detached {
		cmd := exec.Command("sh", "-c", loop)
		cmd.SysProcAttr = group
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		return cmd.Process.Pid
	}
	cmd := exec.Command("sh", "-c", loop+" >/dev/null 2>&1 & echo $!")
	cmd.SysProcAttr = group
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	return pid
}

// sampleUntil takes two samples at least 500 ms apart and keeps the second
// going until pid's process tree has used a few ticks (a busy shared box may
// give a spinning loop little CPU), for at most 5 s.
func sampleUntil(t *testing.T, pid int) (CPUSample, CPUSample) {
	t.Helper()
	a, err := SampleCPU()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(500 * time.Millisecond)
		b, err := SampleCPU()
		if err != nil {
			t.Fatal(err)
		}
		if treeTicks(a, b, pid) >= 3 || time.Now().After(deadline) {
			return a, b
		}
	}
}

// treeTicks is the CPU ticks pid and its descendants used between a and b.
func treeTicks(a, b CPUSample, pid int) uint64 {
	var n uint64
	for p := range ours(b, []int{pid}) {
		if p == os.Getpid() {
			continue
		}
		if !isDescendant(b, p, pid) {
			continue
		}
		if b.Procs[p].ticks > a.Procs[p].ticks {
			n += b.Procs[p].ticks - a.Procs[p].ticks
		}
	}
	return n
}

func isDescendant(s CPUSample, p, root int) bool {
	for i := 0; i < 64 && p > 1; i++ {
		if p == root {
			return true
		}
		p = s.Procs[p].ppid
	}
	return p == root
}

// A process we did not start is foreign until we observe it; then exactly
// its CPU moves from foreign to ours. Both views come from the same two
// samples, so the other jobs on a shared box cancel out.
func TestForeignProcess(t *testing.T) {
	pid := spin(t, true)
	a, b := sampleUntil(t, pid)
	spun := treeTicks(a, b, pid)
	if spun == 0 {
		t.Skip("the spinning loop got no CPU in 5 s")
	}
	if ours(b, nil)[pid] {
		t.Errorf("detached pid %d counted as our descendant", pid)
	}
	blind, seen := Use(a, b, nil), Use(a, b, []int{pid})
	want := float64(spun) / procfs.TicksPerSecond / blind.Seconds
	if moved := seen.Ours - blind.Ours; math.Abs(moved-want) > 1e-9 {
		t.Errorf("observing the pid moved %.4f cores to ours, its tree used %.4f (blind %+v, seen %+v)", moved, want, blind, seen)
	}
	if blind.Foreign < want*0.99 && blind.Foreign < 1.0 {
		t.Errorf("foreign CPU %.3f cores, less than the foreign loop's %.3f", blind.Foreign, want)
	}
}

// A child of this process, and its own children, are ours without being
// observed.
func TestChildIsOurs(t *testing.T) {
	pid := spin(t, false)
	a, b := sampleUntil(t, pid)
	set := ours(b, nil)
	if !set[pid] {
		t.Fatalf("child %d not counted as ours", pid)
	}
	grandchildren := 0
	for p, proc := range b.Procs {
		if proc.ppid == pid && set[p] {
			grandchildren++
		}
	}
	if grandchildren == 0 {
		t.Errorf("the child's own children (timeout's sh) are not counted as ours")
	}
	u := Use(a, b, nil)
	if got, min := u.Ours*u.Seconds*procfs.TicksPerSecond, float64(treeTicks(a, b, pid)); got < min-1e-6 {
		t.Errorf("ours %.1f ticks, less than the child's tree alone (%.0f)", got, min)
	}
}

func run(t *testing.T, ctx context.Context, src string) error {
	t.Helper()
	_, err := startest.Exec(t, startest.Options{Ctx: ctx, Modules: []runtime.Module{Module()}}, src)
	return err
}

func TestStarlark(t *testing.T) {
	err := run(t, context.Background(), `
h = host.info()
assert.true(h.cores >= 1)
assert.true(h.cpu != "")
assert.true(h.fingerprint.startswith(h.name))
assert.eq(len(host.loadavg()), 3)

quiet = host.gate(max_load1 = 100000, poll = "0.2s")
assert.eq(quiet.busy, False)
assert.true(quiet.waited_s < 1, "waited %r" % quiet.waited_s)

loud = host.gate(max_load1 = -1, wait = "0.5s", poll = 0.2)
assert.eq(loud.busy, True)
assert.true(loud.waited_s >= 0.5)

p = host.probe()
r = p.stop()
assert.true(r.foreign_cpu >= 0)
assert.true(r.load1_before >= 0 and r.load1_after >= 0)
assert.true(host.foreign_cpu(interval = "0.2s") >= 0)

host.observe(1)
assert.fails(lambda: host.observe(0), "host.observe: pid must be > 0")
assert.fails(lambda: host.gate(wait = "soon"), "host.gate: for parameter \"wait\": malformed duration")
assert.fails(lambda: host.gate(max_load1 = "x"), "max_load1 must be a number or None")
assert.fails(lambda: host.foreign_cpu(interval = "0s"), "interval\": must be > 0")
`)
	if err != nil {
		t.Fatal(err)
	}
}

// A gate waiting on a busy box stops at once on Ctrl-C.
func TestGateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	err := run(t, ctx, `host.gate(max_load1 = -1, wait = "60s", poll = "0.1s")`)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err = %v, want context canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gate took %s to notice the cancel", d)
	}
}

// host.observe names a PID for its own session only: a second session of
// the same process (a test, an agent) still counts it as foreign.
func TestObservedIsPerSession(t *testing.T) {
	a := startest.Thread(t, startest.Options{})
	b := startest.Thread(t, startest.Options{})
	Observe(a, 4242)
	if got := Observed(a); len(got) != 1 || got[0] != 4242 {
		t.Errorf("session a observed %v, want [4242]", got)
	}
	if got := Observed(b); len(got) != 0 {
		t.Errorf("session b observed %v, want none", got)
	}
}

// TestGuardComparesByContent: host.guard values compare by what they
// watch (issue 33: values builtins return compare by content), and equal
// ones are one dict key.
func TestGuardComparesByContent(t *testing.T) {
	err := run(t, context.Background(), `
assert.eq(host.guard(disk_free_min = "2GiB"), host.guard(disk_free_min = "2GiB"))
assert.eq(host.guard(), host.guard(path = "."))
assert.ne(host.guard(disk_free_min = "2GiB"), host.guard(disk_free_min = "3GiB"))
assert.ne(host.guard(), host.guard(swap_pages_max = 5.0))
assert.ne(host.guard(), host.guard(path = "/"))
keys = {}
keys[host.guard(memory_pressure_max = 3.0)] = 1
keys[host.guard(memory_pressure_max = 3.0)] = 2
assert.eq(len(keys), 1)
`)
	if err != nil {
		t.Fatal(err)
	}
}
