package docker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
)

// ENGINE_ORPHAN_HELPER makes the test binary a benchbook that starts a
// container, prints its id and waits to be killed.
func TestMain(m *testing.M) {
	child.RunMode(child.Supervisor, docker.Reaper) // they re-execute the test binary
	if os.Getenv("ENGINE_ORPHAN_HELPER") != "" {
		orphanHelper()
	}
	os.Exit(m.Run())
}

func orphanHelper() {
	ctx := context.Background()
	e, err := docker.Connect(ctx)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	c, err := e.Run(ctx, docker.Spec{Image: dockertest.ToolImage, Cmd: []string{"spin"}, Limits: cgroup.Limits{CPUs: 0.1}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(c.ID)
	time.Sleep(time.Hour)
	os.Exit(0)
}

func run(t *testing.T, e *docker.Engine, s docker.Spec) *docker.Container {
	t.Helper()
	c, err := e.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Remove(context.Background(), c.ID); err != nil {
			t.Error(err)
		}
	})
	return c
}

func waitExit(t *testing.T, e *docker.Engine, id string, within time.Duration) docker.State {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := e.Inspect(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Running || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestOOMKilledByEngine(t *testing.T) {
	e := dockertest.Engine(t)
	img := dockertest.Tool(t, e)
	c := run(t, e, docker.Spec{Image: img, Cmd: []string{"alloc", "200"}, Limits: cgroup.Limits{Memory: 64 << 20}})
	st := waitExit(t, e, c.ID, 20*time.Second)
	if st.Running {
		t.Fatal("a container allocating 200 MiB under 64 MiB still runs after 20s")
	}
	// The engine may record the kernel's OOM event a moment after the exit
	// (seen once in CI: exit code 137, OOMKilled false).
	st = e.Settle(context.Background(), c.ID, st)
	if !st.OOMKilled {
		t.Errorf("engine state %+v: want OOMKilled", st)
	}
}

func TestCPULimitObserved(t *testing.T) {
	e := dockertest.Engine(t)
	img := dockertest.Tool(t, e)
	c := run(t, e, docker.Spec{Image: img, Cmd: []string{"spin", "2"}, Limits: cgroup.Limits{CPUs: 0.5}})
	st, err := e.Inspect(context.Background(), c.ID)
	if err != nil || !st.Running {
		t.Fatalf("not running: %+v %v", st, err)
	}
	g, err := cgroup.FromPid(st.Pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	stop, err := cgroup.Observe(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	figs := stop(0)
	t.Logf("container cpus=0.5, 2 busy goroutines: %.3f cores", figs["server_cpu_cores"])
	if c := figs["server_cpu_cores"]; c > 0.55 || c < 0.1 {
		t.Errorf("server_cpu_cores = %.3f, want 0.1..0.55", c)
	}
	if s, _ := g.Read(); s.Limit != -1 {
		t.Errorf("no memory limit asked, the cgroup has %d", s.Limit)
	}
}

func TestMissingImage(t *testing.T) {
	e := dockertest.Engine(t)
	_, err := e.Run(context.Background(), docker.Spec{Image: "benchbook-test/nothing:0"})
	if err == nil || !strings.Contains(err.Error(), "not on this engine") {
		t.Fatalf("err = %v", err)
	}
}

// TestNoContainerOutlivesSIGKILL kills a benchbook (this binary in helper
// mode) with SIGKILL: its reaper must remove its container.
func TestNoContainerOutlivesSIGKILL(t *testing.T) {
	e := dockertest.Engine(t)
	dockertest.Tool(t, e)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "ENGINE_ORPHAN_HELPER=1")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	id := strings.TrimSpace(line)
	if strings.HasPrefix(id, "error") || id == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper: %q", id)
	}
	if st, err := e.Inspect(context.Background(), id); err != nil || !st.Running {
		t.Fatalf("helper's container not running: %+v %v", st, err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := e.Inspect(context.Background(), id); err != nil {
			return // gone
		}
		if time.Now().After(deadline) {
			_ = e.Remove(context.Background(), id)
			t.Fatal("the container outlived a SIGKILL of its benchbook by 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
