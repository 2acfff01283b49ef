package backend

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
	"github.com/benchbook/benchbook/builtins/internal/runattrs"
	"github.com/benchbook/benchbook/runtime"
)

// The container tests run the FROM-scratch test tool image on the real
// engine (dockertest): each asserts what the engine or the kernel did.

func toolImage(t *testing.T) string {
	t.Helper()
	e := dockertest.Engine(t)
	return dockertest.Tool(t, e)
}

// TestContainerOOMKillInvalidatesRun: 64MB, then 200 MB allocated in the
// middle of a run: the run is invalid and says OOM.
func TestContainerOOMKillInvalidatesRun(t *testing.T) {
	img := toolImage(t)
	mustRun(t, fmt.Sprintf(`
c = backend.container(%q, cmd = ["alloc", "200", "1"], memory = "64MB", ready = "log:waiting")
assert.eq(c.limits, "memory=64MB")
r = workload.http(%q, clients = 1, duration = "4s", warmup = "0s", observe = [c])
assert.eq(r.valid, False)
assert.eq([t.kind for t in r.trips if t.fatal], ["oom_killed"])
assert.true("OOM" in r.invalid_reason, r.invalid_reason)
`, img, guardServer(t)))
}

// TestContainerCPULimitObserved: two busy goroutines under cpus = 0.5 are
// seen at no more than 0.55 cores over a run's window.
func TestContainerCPULimitObserved(t *testing.T) {
	img := toolImage(t)
	g := mustRun(t, fmt.Sprintf(`
c = backend.container(%q, cmd = ["spin", "2"], cpus = 0.5, ready = "log:ready")
r = workload.http(%q, clients = 1, duration = "2s", warmup = "0.3s", observe = [c])
assert.eq(r.valid, True)
cores = r.server_cpu_cores
assert.true(cores <= 0.55 and cores > 0, cores)
assert.true(r.mem_anon_kb > 0, r.mem_anon_kb)
`, img, guardServer(t)))
	t.Logf("container cpus=0.5, 2 busy goroutines: %v cores", g["cores"])
	if u := runattrs.Unknown(g["r"].(starlark.HasAttrs).AttrNames()); len(u) > 0 {
		t.Errorf("run attributes the table of run attributes (and the README) does not list: %v", u)
	}
}

// TestContainerExitAndRemoval: a container that exits mid-run trips
// "exited" with its code; .stop() removes it from the engine.
func TestContainerExitAndRemoval(t *testing.T) {
	img := toolImage(t)
	g := mustRun(t, fmt.Sprintf(`
c = backend.container(%q, cmd = ["listen", "18765"], ready = "tcp:18765")
assert.true(c.digest.startswith("sha256:"), c.digest)
assert.true("API" in c.engine, c.engine)
id = c.id
c.stop()
assert.eq(c.pid, None)
e = backend.container(%q, cmd = ["exit", "7", "1"], ready = "log:ready")
r = workload.http(%q, clients = 1, duration = "3s", warmup = "0s", observe = [e])
assert.eq([t.kind for t in r.trips if t.fatal], ["exited"])
assert.true("exit code 7" in r.invalid_reason, r.invalid_reason)
`, img, img, guardServer(t)))
	e := dockertest.Engine(t)
	if _, err := e.Inspect(context.Background(), string(g["id"].(starlark.String))); err == nil {
		t.Errorf("the container is still on the engine after .stop()")
	}
}

// TestContainerRestartedByEngine: a container that exits under the
// engine's "always" policy comes back; the run says it restarted.
func TestContainerRestartedByEngine(t *testing.T) {
	img := toolImage(t)
	mustRun(t, fmt.Sprintf(`
c = backend.container(%q, cmd = ["exit", "3", "1"], restart = "always", ready = "log:ready")
r = workload.http(%q, clients = 1, duration = "3s", warmup = "0s", observe = [c])
assert.eq(r.valid, False)
assert.true("restarted" in [t.kind for t in r.trips], [t.kind for t in r.trips])
`, img, guardServer(t)))
}

func TestContainerBadInput(t *testing.T) {
	img := toolImage(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := fmt.Sprint(taken.Addr().(*net.TCPAddr).Port)
	for src, want := range map[string]string{
		`backend.container("benchbook-test/absent:0")`:                                                         "backend.container: image \"benchbook-test/absent:0\" is not on this engine",
		fmt.Sprintf(`backend.container(%q, memory = "lots")`, img):                                             "backend.container: memory:",
		fmt.Sprintf(`backend.container(%q, ready = "ftp://x")`, img):                                           "backend.container: ready must be",
		fmt.Sprintf(`backend.container(%q, cmd = ["exit", "3"], ready = "tcp:1")`, img):                        "exited before it was ready",
		fmt.Sprintf(`backend.container(%q, cmd = ["listen", "%s"], ready = "log:^ready$")`, img, port):         "address already in use", // "already" holds "ready"
		fmt.Sprintf(`backend.container(%q, cmd = ["alloc", "100"], memory = "8MB", ready = "log:ready")`, img): "OOMKilled",
	} {
		_, err := run(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", src, err, want)
		}
	}
}

// TestContainerNoEngine: an engine that does not answer is one error
// naming the builtin and saying what to do.
func TestContainerNoEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	_, err := run(t, `backend.container("any:1")`)
	if err == nil || !strings.Contains(err.Error(), "backend.container: no container engine at unix:///nonexistent/docker.sock") {
		t.Fatalf("err = %v", err)
	}
}

// containerOrphanHelper is the test binary re-executed as a benchbook that
// starts a container and a cluster in an image, prints their ids and
// blocks until it is killed.
func containerOrphanHelper(dir string) {
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: dir, CacheDir: dir}
	th := s.NewThread(&runtime.Cell{Name: "orphan", Key: "c0ffeec0ffeec0ffee"})
	g, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "orphan.star", fmt.Sprintf(`
c = backend.container(%q, cmd = ["spin"], cpus = 0.1)
pg = backend.postgres(image = %q, memory = "256MB")
`, os.Getenv("TOOL_IMAGE"), os.Getenv("PG_IMAGE")), runtime.Predeclared())
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("IDS", g["c"].(*containerHandle).current().ID, g["pg"].(*pgHandle).c.img.ctr.ID)
	select {}
}

// TestNoContainerOutlivesKill9: a benchbook with a container and a cluster
// in an image is killed with SIGKILL; the reaper removes both containers.
func TestNoContainerOutlivesKill9(t *testing.T) {
	e := dockertest.Engine(t)
	tool, pgImg := dockertest.Tool(t, e), dockertest.Postgres(t, e)
	cmd, line := startHelper(t, "BACKEND_CONTAINER_ORPHAN="+t.TempDir(), "TOOL_IMAGE="+tool, "PG_IMAGE="+pgImg)
	ids := strings.Fields(strings.TrimPrefix(line, "IDS "))
	if !strings.HasPrefix(line, "IDS ") || len(ids) != 2 {
		t.Fatalf("helper: %q", line)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for {
			if _, err := e.Inspect(context.Background(), id); err != nil {
				break
			}
			if time.Now().After(deadline) {
				_ = e.Remove(context.Background(), id)
				t.Fatalf("container %.12s outlived a SIGKILL of its benchbook by 30s", id)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestUnobservedContainerOOMKillInvalidatesRun: a container started with
// memory = "64MB" that the kernel OOM-kills during a workload.http run
// left the run valid (7 ok, 344 refused) unless observe listed it (issue
// 33). The container the run sends traffic to is watched whatever observe
// says; one the run does not send traffic to trips a warning only.
func TestUnobservedContainerOOMKillInvalidatesRun(t *testing.T) {
	img := toolImage(t)
	port := testPort(t)
	mustRun(t, fmt.Sprintf(`
c = backend.container(%q, env = {"PORT": "%d", "ALLOC_MB": "200", "ALLOC_AFTER": "1.5"}, memory = "64MB", ready = "http://127.0.0.1:%d/")
r = workload.http(c.url + "/", clients = 1, duration = "4s", warmup = "0s")
assert.eq(r.valid, False)
fatal = [t.kind for t in r.trips if t.fatal]
# oom_killed, or (the engine's flag late on a loaded box) exit code 137.
assert.true(fatal == ["oom_killed"] or fatal == ["exited"] and "exit code 137" in r.invalid_reason, r.invalid_reason)
assert.fails(lambda: compare([r, r], [r, r]), "invalid run")
`, img, port, port))
	// Another target's OOM kill, with traffic elsewhere: a warning, the run valid.
	port = testPort(t)
	mustRun(t, fmt.Sprintf(`
other = backend.container(%q, env = {"PORT": "%d", "ALLOC_MB": "200", "ALLOC_AFTER": "1.5"}, memory = "64MB", ready = "http://127.0.0.1:%d/")
r = workload.http(%q, clients = 1, duration = "4s", warmup = "0s")
assert.eq(r.valid, True)
# The kill's kind: oom_killed, or a bare exit 137 when the engine's OOM flag
# comes too late on a loaded box (containerguard waits for it a while).
assert.eq([t.kind in ["oom_killed", "exited"] and not t.fatal for t in r.trips], [True])
assert.true(any([("oom killed" in w or "exit code 137" in w) and "not the target of this run's traffic" in w for w in r.warnings]), r.warnings)
`, img, port, port, guardServer(t)))
}

func testPort(t *testing.T) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
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
	cmd, line := startHelper(t, "BACKEND_SPIN_HELPER="+tool)
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
