package process

import (
	"fmt"
	"os/exec"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// The run guards against real processes and a real HTTP
// target: each fault gives its trip and the run's validity.

func TestGuardProcessExitsMidRun(t *testing.T) {
	port, dir := pyTarget(t)
	mustRun(t, fmt.Sprintf(`
p = backend.process(["python3", "-c", %q, "%d", "1.5", "3"], cwd = %q, ready = "http://127.0.0.1:%d/")
r = workload.http(p.url + "/", rate = 200, duration = "4s", warmup = "0s", observe = [p])
assert.eq(r.valid, False)
assert.true("exit status 3" in r.invalid_reason, r.invalid_reason)
assert.eq([t.kind for t in r.trips if t.fatal], ["exited"])
t = [t for t in r.trips if t.fatal][0]
assert.true(t.at > 0 and t.at < 3.9, t.at)  # mid-run (the start of the run may lag under load)
assert.fails(lambda: compare([r, r], [r, r]), "invalid run")
`, pyServer, port, dir, port))
}

func TestGuardProcessKilled(t *testing.T) {
	port, dir := pyTarget(t)
	mustRun(t, fmt.Sprintf(`
p = backend.process(["python3", "-c", %q, "%d", "1.5", "kill"], cwd = %q, ready = "http://127.0.0.1:%d/")
r = workload.http(p.url + "/", rate = 200, duration = "4s", warmup = "0s", observe = [p])
assert.eq(r.valid, False)
assert.eq([t.kind for t in r.trips if t.fatal], ["killed"])
assert.true("killed by signal 9" in r.invalid_reason and "not by benchbook" in r.invalid_reason, r.invalid_reason)
`, pyServer, port, dir, port))
}

// A target that lives through the run and logs nothing alarming leaves a
// valid run; ERROR lines warn, and an allow-list silences the expected ones.
func TestGuardProcessHealthyAndLogLines(t *testing.T) {
	mustRun(t, fmt.Sprintf(`
quiet = backend.process(["sleep", "30"])
r = workload.http(%[1]q, rate = 200, duration = "1s", warmup = "0s", observe = [quiet])
assert.eq(r.valid, True)
assert.eq(r.invalid_reason, "")
assert.eq([t for t in r.trips if t.source != "host"], [])

# The lines come 1 s after the start, inside a 3 s run: a loaded box can
# take a good part of a second between the process's start and the run's.
noisy = backend.process(["sh", "-c", "sleep 1; echo 'ERROR: lock timeout'; echo 'ERROR: expected cancel'; echo retry 1; echo backoff; sleep 30"])
r2 = workload.http(%[1]q, rate = 200, duration = "3s", warmup = "0s", observe = [noisy])
assert.eq(r2.valid, True)
assert.eq([t.kind for t in r2.trips if t.source != "host"], ["log_errors"])
assert.true("2 ERROR" in r2.trips[0].evidence, r2.trips[0].evidence)
assert.true(len([w for w in r2.warnings if "log errors" in w]) == 1, r2.warnings)

noisy.restart()
r3 = workload.http(%[1]q, rate = 200, duration = "3s", warmup = "0s",
                   observe = [noisy.watch(allow = ["expected cancel"], count = {"retries": "retry|backoff"})])
assert.true("1 ERROR" in r3.trips[0].evidence and "1 more allowed" in r3.trips[0].evidence, r3.trips[0].evidence)
assert.eq(r3.retries, 2.0)
# per request of the window (the observers' count, taken as the window closes)
assert.true(abs(r3.retries_per_req * r3.count / 2.0 - 1) < 0.05, (r3.retries_per_req, r3.count))
`, backendtest.OKServer(t)))
}

func TestGuardDiskWatermark(t *testing.T) {
	mustRun(t, fmt.Sprintf(`
r = workload.http(%q, clients = 1, duration = "0.5s", warmup = "0s", observe = [host.guard(disk_free_min = "1000TB")])
assert.eq(r.valid, False)
assert.eq([t.kind for t in r.trips], ["disk"])
assert.true("under the watermark of" in r.invalid_reason, r.invalid_reason)
ok = workload.http(%q, clients = 1, duration = "0.5s", warmup = "0s", observe = [host.guard(disk_free_min = "1kB")])
assert.eq(ok.valid, True)
`, backendtest.OKServer(t), backendtest.OKServer(t)))
}

// workload.exec's measured runs are guarded as a load generator's window
// is: a watched process that dies during them makes the run invalid, the
// host guard trips on the disk watermark, a healthy watch leaves the run
// valid, and observers' figures come per run. The warmup is not watched.
func TestGuardExec(t *testing.T) {
	mustRun(t, `
p = backend.process(["sh", "-c", "sleep 0.6; exit 3"])
r = workload.exec("sleep 0.2", runs = 6, warmup = 0, observe = [p])
assert.eq(r.valid, False)
assert.true("exit status 3" in r.invalid_reason, r.invalid_reason)
assert.eq([t.kind for t in r.trips if t.fatal], ["exited"])
assert.true(len([w for w in r.warnings if w.startswith("INVALID")]) == 1, r.warnings)
assert.fails(lambda: compare([r, r], [r, r]), "invalid run")

full = workload.exec("true", runs = 2, observe = [host.guard(disk_free_min = "1000TB")])
assert.eq(full.valid, False)
assert.eq([t.kind for t in full.trips], ["disk"])

# dies during the warmup, before the watch: not this run's business
early = backend.process(["sh", "-c", "sleep 0.1; echo 'retry'; sleep 30"])
ok = workload.exec("sleep 0.3", runs = 3, warmup = 1, observe = [early.watch(count = {"retries": "retry"})])
assert.eq(ok.valid, True)
assert.eq([t for t in ok.trips if t.source != "host"], [])
assert.eq(ok.retries, 0.0)
assert.fails(lambda: workload.exec("true", observe = [1]), "workload.exec: observe\\[0\\]: a int cannot be observed")
`)
}

// pyServer serves HTTP on 127.0.0.1:argv[1], says "serving", and
// argv[2] seconds after it started exits with status argv[3] (3 when
// absent) or, for "kill", kills itself with SIGKILL.
const pyServer = `import http.server, os, signal, sys, threading
s = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), http.server.SimpleHTTPRequestHandler)
print("serving", flush=True)
end = sys.argv[3] if len(sys.argv) > 3 else "3"
threading.Timer(float(sys.argv[2]), lambda: os.kill(os.getpid(), signal.SIGKILL) if end == "kill" else os._exit(int(end))).start()
s.serve_forever()`

// pyTarget is a free port and a directory for a pyServer.
func pyTarget(t *testing.T) (port int, dir string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		needs.Missing(t, "python3 (the test's HTTP target)", "apt-get install python3")
	}
	return testPort(t), t.TempDir()
}

// TestGuardUnobservedTargets: every process the notebook started is watched
// by every run. The one the run sends traffic to (by its ready check's port,
// or by the socket its processes listen on) makes the run invalid when it
// dies, observe or not, and still does in the next run once it is dead;
// another one's death is a warning on the run, observed or not (issue 33:
// observe adds figures, it does not turn the guard on).
func TestGuardUnobservedTargets(t *testing.T) {
	a, dirA := pyTarget(t)
	b, dirB := pyTarget(t)
	g := mustRun(t, fmt.Sprintf(`
web = backend.process(["python3", "-c", %q, "%d", "1.5"], cwd = %q, ready = "http://127.0.0.1:%d/")
r1 = workload.http(web.url + "/", rate = 200, duration = "4s", warmup = "0s")
assert.eq(r1.valid, False)
assert.eq([t.kind for t in r1.trips if t.fatal], ["exited"])

quiet = backend.process(["python3", "-c", %q, "%d", "1.5"], cwd = %q, ready = "log:^serving$")
r2 = workload.http("http://localhost:%d/", rate = 200, duration = "4s", warmup = "0s")
assert.eq(r2.valid, False)
assert.eq([t.kind for t in r2.trips if t.fatal], ["exited"])
# Dead, its socket gone: the next run against its port is still its run.
r2b = workload.http("http://localhost:%d/", clients = 1, duration = "0.5s", warmup = "0s")
assert.eq(r2b.valid, False)
assert.true("not running when the run started" in r2b.invalid_reason, r2b.invalid_reason)

other = backend.process(["sh", "-c", "sleep 1.5; exit 4"])
r3 = workload.http(%q, rate = 200, duration = "4s", warmup = "0s")
assert.eq(r3.valid, True)
assert.eq([t.kind for t in r3.trips], ["exited"])
warned = [w for w in r3.warnings if "exit status 4" in w and "not the target of this run's traffic" in w]

watched = backend.process(["sh", "-c", "sleep 1.5; exit 5"])
r4 = workload.http(%q, rate = 200, duration = "4s", warmup = "0s", observe = [watched.watch(count = {"x": "x"})])
assert.eq(r4.valid, True)
assert.eq([(t.kind, t.fatal) for t in r4.trips], [("exited", False)])
assert.true(any(["exit status 5" in w and "not the target of this run's traffic" in w for w in r4.warnings]), r4.warnings)
`, pyServer, a, dirA, a, pyServer, b, dirB, b, b, backendtest.OKServer(t), backendtest.OKServer(t)))
	if n := g["warned"].(*starlark.List).Len(); n != 1 {
		t.Errorf("the bystander's exit is not a warning on the run: %v", g["r3"].(starlark.HasAttrs))
	}
}

// abab reruns a run whose target died (here: B's first run) and compare
// takes the experiment once every kept run is valid; a run left invalid
// (reruns = 0) makes compare refuse until told.
func TestGuardAbabReruns(t *testing.T) {
	port, dir := pyTarget(t)
	mustRun(t, fmt.Sprintf(`
load("@std/abab.star", "abab")
tries = []
def one(arm):
    tries.append(arm)
    dies = arm == "B" and len([a for a in tries if a == "B"]) == 1
    # The dying target lives 0.8 s from its start: at load 10, 0.3 s left
    # a run without one request, whose rps of 0 compare rightly refuses.
    p = backend.process(["python3", "-c", %[1]q, "%[2]d", "0.8" if dies else "30", "1"], cwd = %[3]q, ready = "http://127.0.0.1:%[2]d/")
    r = workload.http(p.url + "/", clients = 1, duration = "1.5s", warmup = "0s")
    p.stop()
    return r
exp = abab(arms = {"A": None, "B": None}, pairs = 1, run = one, name = "rerun")
assert.eq(tries, ["A", "B", "B"])
assert.eq([g.reruns for g in exp.gates], [0, 1])
assert.true(exp.runs["B"][0].valid)
compare(exp, metric = "rps")

tries.clear()
kept = abab(arms = {"A": None, "B": None}, pairs = 1, run = one, name = "kept", reruns = 0)
assert.eq(kept.runs["B"][0].valid, False)
assert.true("INVALID" in str(kept.runs["B"][0]))
assert.fails(lambda: compare(kept, metric = "rps"), "B run 1: invalid run")
c = compare(kept, metric = "rps", allow_invalid = True, allow_errors = True)  # its target died: refused requests
assert.true(len([w for w in c.warnings if "INVALID" in w and "exit status 1" in w]) == 1, c.warnings)
`, pyServer, port, dir))
}
