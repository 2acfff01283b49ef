package backend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
)

// TestCleanOrphansRemovesStaleGroups: the empty limits cgroup of a
// benchbook that is gone (its pid in the name is dead) is removed; ours stays.
func TestCleanOrphansRemovesStaleGroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroup limits need root")
	}
	dead, err := cgroup.New(kit.GroupPrefix+"2147480000-1", cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := cgroup.New(fmt.Sprintf("%s%d-999999", kit.GroupPrefix, os.Getpid()), cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	msg := CleanOrphans(context.Background())
	if !strings.Contains(msg, "empty cgroups of benchbooks that are gone") {
		t.Errorf("CleanOrphans said %q", msg)
	}
	if _, err := dead.Read(); err == nil {
		t.Errorf("the stale group %s is still there", dead.Describe())
	}
	if _, err := live.Read(); err != nil {
		t.Errorf("our own group went: %v", err)
	}
}

// TestNextRunRemovesWhatADeadBenchbookLeft: a benchbook and its reaper
// killed at once (as a CI job's cgroup kill does) leave their container
// running; the sweep every run starts with removes it and says so, and
// leaves the container of a benchbook that still runs (this test). Before,
// it ran until benchbook clean.
func TestNextRunRemovesWhatADeadBenchbookLeft(t *testing.T) {
	e := dockertest.Engine(t)
	tool := dockertest.Tool(t, e)
	ctx := context.Background()
	mine, err := e.Run(ctx, docker.Spec{Image: tool, Cmd: []string{"spin"}, Limits: cgroup.Limits{CPUs: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Remove(context.Background(), mine.ID) })
	cmd, line := backendtest.StartHelper(t, "^$", "BACKEND_SPIN_HELPER="+tool)
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ID" {
		t.Fatalf("helper: %q", line)
	}
	id, name := f[1], f[2]
	t.Cleanup(func() { e.Remove(context.Background(), id) })
	reaper := reaperOf(cmd.Process.Pid)
	if reaper == 0 {
		t.Fatal("no reaper found for the helper")
	}
	syscall.Kill(reaper, syscall.SIGKILL)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(500 * time.Millisecond)
	if _, err := e.Inspect(ctx, id); err != nil {
		// Any benchbook run on this box sweeps at its start (other
		// packages' tests run at the same time): one did it first.
		t.Logf("another run's sweep removed the container first: %v", err)
		if _, err := e.Inspect(ctx, mine.ID); err != nil {
			t.Errorf("a sweep removed the container of a live benchbook: %v", err)
		}
		return
	}
	t0 := time.Now()
	msg := SweepDead(ctx)
	t.Logf("the sweep took %v: %s", time.Since(t0), msg)
	if _, err := e.Inspect(ctx, id); err == nil {
		t.Errorf("the dead benchbook's container survived the sweep (%q)", msg)
	}
	if !strings.Contains(msg, "that a benchbook now gone left running") || !strings.Contains(msg, name) {
		t.Errorf("the sweep did not say what it removed: %q", msg)
	}
	if _, err := e.Inspect(ctx, mine.ID); err != nil {
		t.Errorf("the sweep removed the container of a live benchbook: %v", err)
	}
}

// spinHelper starts one container and blocks (BACKEND_SPIN_HELPER=IMAGE).
func spinHelper(image string) {
	ctx := context.Background()
	e, err := docker.Connect(ctx)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	c, err := e.Run(ctx, docker.Spec{Image: image, Cmd: []string{"spin"}, Limits: cgroup.Limits{CPUs: 0.1}})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("ID", c.ID, c.Name)
	select {}
}

// reaperOf finds the container reaper a benchbook of pid started.
func reaperOf(pid int) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, _ := os.ReadFile(p)
		args := strings.Split(string(data), "\x00")
		if len(args) > 2 && args[1] == "__reap_containers" && strings.HasPrefix(args[2], fmt.Sprint(pid)+"-") {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return n
		}
	}
	return 0
}

func TestMain(m *testing.M) {
	if image := os.Getenv("BACKEND_SPIN_HELPER"); image != "" {
		spinHelper(image) // never returns
	}
	os.Exit(m.Run())
}
