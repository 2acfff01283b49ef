package cgroup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// The test binary doubles as its own target: CGROUP_HELPER=spin burns CPU,
// CGROUP_HELPER=alloc:N touches N MiB and sleeps.
func TestMain(m *testing.M) {
	child.RunMode(child.Supervisor) // it re-executes the test binary
	switch h := os.Getenv("CGROUP_HELPER"); {
	case h == "spin":
		for i := 0; ; i++ {
			_ = i * i
		}
	case len(h) > 6 && h[:6] == "alloc:":
		n, _ := strconv.Atoi(h[6:])
		buf := make([]byte, n<<20)
		for i := 0; i < len(buf); i += 4096 {
			buf[i] = 1
		}
		time.Sleep(30 * time.Second)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper starts the test binary as a helper inside a new limited group.
func helper(t *testing.T, mode string, l Limits) (*exec.Cmd, *Group) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root")
	}
	g, err := New(fmt.Sprintf("bbtest-%d-%s", os.Getpid(), t.Name()), l)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CGROUP_HELPER="+mode)
	if err := child.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for i := 0; i < 100 && !g.Empty(); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if err := g.Remove(); err != nil {
			t.Errorf("Remove: %v", err)
		}
	})
	return cmd, g
}

func TestCPUQuotaHolds(t *testing.T) {
	_, g := helper(t, "spin", Limits{CPUs: 0.5})
	time.Sleep(200 * time.Millisecond)
	stop, err := Observe(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	figs := stop(0)
	cores := figs["server_cpu_cores"]
	t.Logf("cpus=0.5: %.3f cores, throttled %v periods", cores, figs["cpu_throttled"])
	if cores > 0.55 || cores < 0.2 {
		t.Errorf("a busy loop limited to 0.5 CPUs used %.3f cores, want 0.2..0.55", cores)
	}
	// On a busy box the loop may get less than its quota and never be
	// throttled; the kernel must hold the quota all the same.
	if q, err := readInt(g.dir("cpu") + "/cpu.cfs_quota_us"); g.v2 || err != nil || q != cfsPeriod/2 {
		if !g.v2 {
			t.Errorf("cpu.cfs_quota_us = %d, %v; want %d", q, err, cfsPeriod/2)
		}
	}
}

func TestMemoryLimitKills(t *testing.T) {
	cmd, g := helper(t, "alloc:200", Limits{Memory: 64 << 20})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a process allocating 200 MiB under a 64 MiB limit was not killed")
	}
	if ws := cmd.ProcessState.String(); ws != "signal: killed" {
		t.Errorf("process ended with %q, want signal: killed", ws)
	}
	s, err := g.Read()
	if err != nil {
		t.Fatal(err)
	}
	if s.OOMKills < 1 {
		t.Errorf("oom_kill = %d, want >= 1", s.OOMKills)
	}
	if s.Limit != 64<<20 {
		t.Errorf("limit = %d, want %d", s.Limit, 64<<20)
	}
}

func TestParseProcCgroup(t *testing.T) {
	g, err := parseProcCgroup("0::/a/b\n", true)
	if err != nil || g.dirs[""] != Root+"/a/b" {
		t.Fatalf("v2: %v %v", g, err)
	}
}
