package process

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProcessCPULimit: a plain process under cpus = 0.5 burns a busy loop;
// its own CPU time from /proc (not the cgroup's) must stay near half a core.
func TestProcessCPULimit(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroup limits need root")
	}
	g := mustRun(t, `p = backend.process(["sh", "-c", "while :; do :; done"], cpus = 0.5, memory = "64MB")`)
	p := g["p"].(*Handle)
	defer p.stop(time.Second)
	time.Sleep(300 * time.Millisecond)
	stop, err := p.StartObserving(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	time.Sleep(2 * time.Second)
	figs, err := stop(0)
	if err != nil {
		t.Fatal(err)
	}
	procCores := figs["server_cpu_us"] / 1e6 / time.Since(t0).Seconds()
	t.Logf("process cpus=0.5: %.3f cores from /proc, %.3f from the cgroup", procCores, figs["server_cpu_cores"])
	if procCores > 0.55 || procCores < 0.1 {
		t.Errorf("busy loop under cpus=0.5 used %.3f cores, want 0.1..0.55", procCores)
	}
	if _, ok := figs["mem_anon_kb"]; !ok {
		t.Errorf("no cgroup figures in %v", figs)
	}
}

func TestProcessMemoryLimitKills(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroup limits need root")
	}
	// The shell holds a command substitution's whole output in memory.
	g := mustRun(t, `p = backend.process(["sh", "-c", "x=$(head -c 100000000 /dev/zero | tr '\\0' a); sleep 100"], memory = "32MB")`)
	p := g["p"].(*Handle)
	defer p.stop(time.Second)
	waitOOMKill(t, p)
}

func TestLimitArgErrors(t *testing.T) {
	for src, want := range map[string]string{
		`backend.process("sleep 1", cpus = -1)`:       "backend.process: cpus: want a number of CPUs > 0",
		`backend.process("sleep 1", memory = "lots")`: "backend.process: memory: want a size",
		`backend.process("sleep 1", memory = "1MB")`:  "below the 6MB",
		`backend.process("sleep 1", cpuset = "1-0")`:  "backend.process: cpuset:",
		`backend.process("sleep 1", pids = -2)`:       "backend.process: pids:",
	} {
		_, err := run(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", src, err, want)
		}
	}
}

// TestProcessCpusetAndPids: cpuset pins the process (the kernel's own
// Cpus_allowed_list says so) and pids caps how many tasks it may have.
func TestProcessCpusetAndPids(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroup limits need root")
	}
	// The shell sleeps 2 s before it forks: a fork refused under pids can
	// end it, and its status must be read first (with 0.3 s, a race pass
	// at load 10 read it after the shell had gone).
	g := mustRun(t, `p = backend.process(["sh", "-c", "sleep 2; for i in 1 2 3 4 5 6 7 8; do sleep 30 & done; echo spawned; wait"], cpuset = "0", pids = 4)`)
	p := g["p"].(*Handle)
	defer p.stop(time.Second)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "Cpus_allowed_list:\t0\n") {
		t.Errorf("cpuset = \"0\" not applied:\n%s", status)
	}
	deadline := time.Now().Add(10 * time.Second)
	for out := ""; !strings.Contains(out, "spawned") && !strings.Contains(out, "fork") && time.Now().Before(deadline); out = strings.Join(p.log.Tail(0), "\n") {
		time.Sleep(50 * time.Millisecond)
	}
	logs := strings.Join(p.log.Tail(0), "\n")
	if !strings.Contains(logs, "fork") && !strings.Contains(logs, "Resource temporarily unavailable") {
		t.Errorf("8 background sleeps under pids = 4 all started; output:\n%s", logs)
	}
}

// TestProcessOOMInsideLimitInvalidates: a child of a limited process is
// OOM-killed while the process itself lives on; its watch trips
// oom_killed (the cgroup's kill count is the oracle), as a container's does.
func TestProcessOOMInsideLimitInvalidates(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroup limits need root")
	}
	g := mustRun(t, `p = backend.process(["sh", "-c", "sleep 0.5; (x=$(head -c 100000000 /dev/zero | tr '\\0' a)); sleep 100"], memory = "32MB")`)
	p := g["p"].(*Handle)
	defer p.stop(time.Second)
	stop := p.Watch(context.Background(), time.Now())
	waitOOMKill(t, p)
	var kinds []string
	for _, tr := range stop() {
		kinds = append(kinds, tr.Kind)
		if tr.Kind == "oom_killed" && !tr.Fatal {
			t.Errorf("oom_killed trip not fatal: %+v", tr)
		}
	}
	if !slices.Contains(kinds, "oom_killed") {
		t.Errorf("trips %v, want oom_killed", kinds)
	}
}

// waitOOMKill waits up to 20 s for the kernel to OOM-kill a process of p's
// cgroup.
func waitOOMKill(t *testing.T, p *Handle) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := p.group.Read()
		if err == nil && st.OOMKills > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no OOM kill under memory=32MB: %+v %v", st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
