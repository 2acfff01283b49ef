package host

import (
	"context"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarktest"

	"github.com/benchbook/benchbook/runtime"
)

// spin starts a CPU-bound shell loop that ends by itself after 5 s.
// detached: its parent exits at once, so it is not our descendant.
func spin(t *testing.T, detached bool) int {
	t.Helper()
	loop := `timeout 5 sh -c 'while :; do :; done'`
	if !detached {
		cmd := exec.Command("sh", "-c", loop)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	out, err := exec.Command("sh", "-c", loop+" >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

func sampleOver(t *testing.T, d time.Duration) (CPUSample, CPUSample) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // let the loop start
	a, err := SampleCPU()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	b, err := SampleCPU()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// A process we did not start is foreign until we observe it; then its CPU
// moves from foreign to ours. Both views come from the same two samples, so
// the other jobs on a shared box cancel out.
func TestForeignProcess(t *testing.T) {
	pid := spin(t, true)
	a, b := sampleOver(t, time.Second)
	blind, seen := Use(a, b, nil), Use(a, b, []int{pid})
	// Thresholds are low: the box is shared and the loop may get little CPU.
	if moved := seen.Ours - blind.Ours; moved < 0.03 {
		t.Errorf("observing the spinning pid moved %.2f cores to ours, want >= 0.03 (blind %+v, seen %+v)", moved, blind, seen)
	}
	if blind.Foreign < 0.03 {
		t.Errorf("foreign CPU %.2f cores with a loop spinning, want >= 0.03", blind.Foreign)
	}
	if ours(b, nil)[pid] {
		t.Errorf("detached pid %d counted as our descendant", pid)
	}
}

// A child of this process is ours without being observed.
func TestChildIsOurs(t *testing.T) {
	pid := spin(t, false)
	a, b := sampleOver(t, time.Second)
	if !ours(b, nil)[pid] {
		t.Fatalf("child %d not counted as ours", pid)
	}
	grandchildren := 0
	for p, proc := range b.Procs {
		if proc.ppid == pid && ours(b, nil)[p] {
			grandchildren++
		}
	}
	if grandchildren == 0 {
		t.Errorf("the child's own children (timeout's sh) are not counted as ours")
	}
	if u := Use(a, b, nil); u.Ours < 0.03 {
		t.Errorf("ours %.2f cores with a child spinning, want >= 0.03 (%+v)", u.Ours, u)
	}
}

func run(t *testing.T, ctx context.Context, src string) error {
	t.Helper()
	s := &runtime.Session{Ctx: ctx, Stderr: io.Discard, NotebookDir: t.TempDir(), CacheDir: t.TempDir()}
	defer s.Close()
	th := s.NewThread(&runtime.Cell{Name: "t"})
	starlarktest.SetReporter(th, t)
	assertMod, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	env := runtime.Predeclared()
	env["assert"] = assertMod["assert"]
	_, err = starlark.ExecFile(th, "host_test.star", src, env)
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
assert.fails(lambda: host.gate(wait = "soon"), "host.gate: wait: ")
assert.fails(lambda: host.gate(max_load1 = "x"), "max_load1 must be a number or None")
assert.fails(lambda: host.foreign_cpu(interval = "0s"), "interval must be > 0")
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
