package container

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
	"github.com/benchbook/benchbook/builtins/workload"
)

// The container tests run the FROM-scratch test tool image on the real
// engine (dockertest): each asserts what the engine or the kernel did.

func toolImage(t *testing.T) string {
	t.Helper()
	e := dockertest.Engine(t)
	return dockertest.Tool(t, e)
}

// TestContainerOOMKillInvalidatesRun: 64MB, then 200 MB allocated in the
// middle of a run against the container: the run is invalid and says OOM.
func TestContainerOOMKillInvalidatesRun(t *testing.T) {
	img := toolImage(t)
	port := backendtest.FreePort(t)
	mustRun(t, fmt.Sprintf(`
c = backend.container(%q, env = {"PORT": "%d", "ALLOC_MB": "200", "ALLOC_AFTER": "1"}, memory = "64MB", ready = "http://127.0.0.1:%d/")
assert.eq(c.limits, "memory=64MB")
r = workload.http(c.url + "/", rate = 200, duration = "4s", warmup = "0s", observe = [c])
assert.eq(r.valid, False)
assert.eq([t.kind for t in r.trips if t.fatal], ["oom_killed"])
assert.true("OOM" in r.invalid_reason, r.invalid_reason)
`, img, port, port))
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
`, img, backendtest.OKServer(t)))
	t.Logf("container cpus=0.5, 2 busy goroutines: %v cores", g["cores"])
	if u := workload.Undocumented(g["r"].(starlark.HasAttrs)); len(u) > 0 {
		t.Errorf("run attributes the table of run attributes (and the reference) does not list: %v", u)
	}
}

// TestContainerExitAndRemoval: a container that exits mid-run trips
// "exited" with its code; .stop() removes it from the engine.
func TestContainerExitAndRemoval(t *testing.T) {
	img := toolImage(t)
	port := backendtest.FreePort(t)
	g := mustRun(t, fmt.Sprintf(`
c = backend.container(%q, cmd = ["listen", "18765"], ready = "tcp:18765")
assert.true(c.digest.startswith("sha256:"), c.digest)
assert.true("API" in c.engine, c.engine)
id = c.id
c.stop()
assert.eq(c.pid, None)
e = backend.container(%q, env = {"PORT": "%d", "EXIT_CODE": "7", "EXIT_AFTER": "1"}, ready = "log:ready")
r = workload.http("http://127.0.0.1:%d/", rate = 200, duration = "3s", warmup = "0s", observe = [e])
assert.eq([t.kind for t in r.trips if t.fatal], ["exited"])
assert.true("exit code 7" in r.invalid_reason, r.invalid_reason)
`, img, img, port, port))
	e := dockertest.Engine(t)
	if _, err := e.Inspect(context.Background(), string(g["id"].(starlark.String))); err == nil {
		t.Errorf("the container is still on the engine after .stop()")
	}
}

// TestContainerRestartedByEngine: a container that exits under the
// engine's "always" policy comes back; the run against it says it
// restarted.
func TestContainerRestartedByEngine(t *testing.T) {
	img := toolImage(t)
	port := backendtest.FreePort(t)
	mustRun(t, fmt.Sprintf(`
c = backend.container(%q, env = {"PORT": "%d", "EXIT_CODE": "3", "EXIT_AFTER": "1"}, restart = "always", ready = "http://127.0.0.1:%d/")
r = workload.http(c.url + "/", rate = 200, duration = "3s", warmup = "0s")
assert.eq(r.valid, False)
assert.true("restarted" in [t.kind for t in r.trips], [t.kind for t in r.trips])
`, img, port, port))
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
		fmt.Sprintf(`backend.container(%q, cmd = ["alloc", "100"], memory = "8MB", ready = "log:ready")`, img): "OOM",                    // the engine's OOMKilled, or exit 137 under the limit named as the OOM killer's
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

// TestUnobservedContainerOOMKillInvalidatesRun: a container started with
// memory = "64MB" that the kernel OOM-kills during a workload.http run
// left the run valid (7 ok, 344 refused) unless observe listed it (issue
// 33). The container the run sends traffic to is watched whatever observe
// says; one the run does not send traffic to trips a warning only.
func TestUnobservedContainerOOMKillInvalidatesRun(t *testing.T) {
	img := toolImage(t)
	port := backendtest.FreePort(t)
	mustRun(t, fmt.Sprintf(`
c = backend.container(%q, env = {"PORT": "%d", "ALLOC_MB": "200", "ALLOC_AFTER": "1.5"}, memory = "64MB", ready = "http://127.0.0.1:%d/")
r = workload.http(c.url + "/", rate = 200, duration = "4s", warmup = "0s")
assert.eq(r.valid, False)
fatal = [t.kind for t in r.trips if t.fatal]
# oom_killed, or (the engine's flag late on a loaded box) exit code 137.
assert.true(fatal == ["oom_killed"] or fatal == ["exited"] and "exit code 137" in r.invalid_reason, r.invalid_reason)
assert.fails(lambda: compare([r, r], [r, r]), "invalid run")
`, img, port, port))
	// Another target's OOM kill, with traffic elsewhere: a warning, the run valid.
	// Its allocation counts from the container's start, so a slow start
	// and ready check can put the kill before the run (at load 6 a 4 s run
	// after a 1.5 s delay saw no trip at all): 3 s in, inside a 6 s run.
	port = backendtest.FreePort(t)
	mustRun(t, fmt.Sprintf(`
other = backend.container(%q, env = {"PORT": "%d", "ALLOC_MB": "200", "ALLOC_AFTER": "3"}, memory = "64MB", ready = "http://127.0.0.1:%d/")
r = workload.http(%q, rate = 200, duration = "6s", warmup = "0s")
assert.eq(r.valid, True)
# The kill's kind: oom_killed, or a bare exit 137 when the engine's OOM flag
# comes too late on a loaded box (kit.WatchContainer waits for it a while).
assert.eq([t.kind in ["oom_killed", "exited"] and not t.fatal for t in r.trips], [True])
assert.true(any([("oom killed" in w or "exit code 137" in w) and "not the target of this run's traffic" in w for w in r.warnings]), r.warnings)
`, img, port, port, backendtest.OKServer(t)))
}
