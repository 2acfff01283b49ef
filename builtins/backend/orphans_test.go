package backend

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// TestCleanOrphansRemovesStaleGroups: the empty limits cgroup of a
// benchbook that is gone (its pid in the name is dead) is removed; ours stays.
func TestCleanOrphansRemovesStaleGroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cgroup limits need root")
	}
	ns := procfs.PidNamespace()
	dead, err := cgroup.New(fmt.Sprintf("%s2147480000-%s-1", kit.GroupPrefix, ns), cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := cgroup.New(fmt.Sprintf("%s%d-%s-999999", kit.GroupPrefix, os.Getpid(), ns), cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	// The same dead pid counted in another pid namespace may be a live
	// benchbook there: unsure, so kept (a sweep inside a namespace removed
	// the groups of benchbooks outside it).
	elsewhere, err := cgroup.New(kit.GroupPrefix+"2147480000-1-2", cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Remove()
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
	if _, err := elsewhere.Read(); err != nil {
		t.Errorf("the group of a pid counted in another namespace went: %v", err)
	}
}

// TestNextRunRemovesWhatADeadBenchbookLeft: a benchbook and its reaper
// killed at once (as a CI job's cgroup kill does) leave their container
// running; the sweep every run starts with removes it and says so, and
// leaves the container of a benchbook that still runs. Before, it ran
// until benchbook clean. All of it happens in a pid namespace of its own
// (nsSweepHelper), so no other benchbook's sweep can remove the container
// first: it is gone only if this SweepDead removed it.
func TestNextRunRemovesWhatADeadBenchbookLeft(t *testing.T) {
	e := dockertest.Engine(t)
	tool := dockertest.Tool(t, e)
	out, err := backendtest.InPidNamespace(t, []string{"BACKEND_NS_SWEEP=" + tool}, os.Args[0], "-test.run=^$")
	ids := map[string][]string{} // LIVE, DEAD: id, name; SWEPT: the message
	for _, line := range strings.Split(out, "\n") {
		if kind, rest, ok := strings.Cut(line, " "); ok && (kind == "LIVE" || kind == "DEAD" || kind == "SWEPT" || kind == "KEPT") {
			ids[kind] = strings.SplitN(rest, " ", 2)
		}
	}
	for _, kind := range []string{"LIVE", "DEAD"} {
		if len(ids[kind]) == 2 {
			id := ids[kind][0]
			t.Cleanup(func() { e.Remove(context.Background(), id) })
		}
	}
	if err != nil || len(ids["LIVE"]) != 2 || len(ids["DEAD"]) != 2 || len(ids["SWEPT"]) == 0 {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	msg := strings.Join(ids["SWEPT"], " ")
	ctx := context.Background()
	if _, err := e.Inspect(ctx, ids["DEAD"][0]); err == nil {
		t.Errorf("the dead benchbook's container survived the sweep (%q)", msg)
	}
	if !strings.Contains(msg, "that a benchbook now gone left running") || !strings.Contains(msg, ids["DEAD"][1]) {
		t.Errorf("the sweep did not say what it removed: %q", msg)
	}
	if kept := strings.Join(ids["KEPT"], " "); kept != "kept" {
		t.Errorf("the sweep removed the container of a live benchbook: %s", kept)
	}
}

// nsSweepHelper (BACKEND_NS_SWEEP=IMAGE) is the first process of a pid
// namespace: two benchbooks start a container each; one is killed with
// its reaper; then it sweeps as a run starts and prints what it found.
func nsSweepHelper(image string) {
	live, liveLine := spinChild(image)
	dead, deadLine := spinChild(image)
	if reaper := reaperOf(dead.Process.Pid); reaper > 0 {
		syscall.Kill(reaper, syscall.SIGKILL)
	}
	dead.Process.Kill()
	dead.Wait()
	msg := SweepDead(context.Background())
	fmt.Println("LIVE", strings.TrimPrefix(liveLine, "ID "))
	fmt.Println("DEAD", strings.TrimPrefix(deadLine, "ID "))
	fmt.Println("SWEPT", msg)
	// Whether the live owner's container survived is read while its owner
	// still runs: once killed below, its own reaper removes it.
	kept := "gone"
	if e, err := docker.Connect(context.Background()); err == nil {
		if f := strings.Fields(liveLine); len(f) > 1 {
			if _, err := e.Inspect(context.Background(), f[1]); err == nil {
				kept = "kept"
			} else {
				kept = "gone " + err.Error()
			}
		}
		e.Close()
	}
	fmt.Println("KEPT", kept)
	live.Process.Kill()
	os.Exit(0)
}

// spinChild starts a spinHelper and returns it with its "ID id name" line.
func spinChild(image string) (*exec.Cmd, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BACKEND_NS_SWEEP=", "BACKEND_SPIN_HELPER="+image)
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	return cmd, strings.TrimSpace(line)
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
	hidden.Run() // the supervisor and the reaper re-execute the test binary
	if image := os.Getenv("BACKEND_SPIN_HELPER"); image != "" {
		spinHelper(image) // never returns
	}
	if image := os.Getenv("BACKEND_NS_SWEEP"); image != "" {
		nsSweepHelper(image) // never returns
	}
	os.Exit(m.Run())
}
