package process

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/runattrs"
	"github.com/benchbook/benchbook/runtime/procfs"
)

func TestProcessNeverReady(t *testing.T) {
	start := time.Now()
	_, err := run(t, `backend.process(["sh", "-c", "echo starting up; echo cannot bind port >&2; sleep 30"], ready = "tcp:1", ready_timeout = "1s")`)
	if err == nil || !strings.Contains(err.Error(), "cannot bind port") || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("error %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	_, err = run(t, `backend.process("sh -c exit", ready = "log:never")`)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("error %v", err)
	}
	_, err = run(t, `backend.process("true", ready = "udp:1")`)
	if err == nil || !strings.Contains(err.Error(), "backend.process: ready must be") {
		t.Fatalf("error %v", err)
	}
}

func TestProcessReadyHTTP(t *testing.T) {
	port := backendtest.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	mustRun(t, fmt.Sprintf(`
p = backend.process(["python3", "-m", "http.server", "%d", "--bind", "127.0.0.1"], ready = "%s/", ready_timeout = 10)
assert.true(p.pid > 0)
assert.eq(p.url, "%s")  # scheme and host of the ready check
p.stop(grace = "100ms")
assert.eq(p.pid, None)
`, port, url, url))
}

// TestProcessReadyAnsweredByAnotherServer: a server already answering the
// ready check's port (an old one left running) would pass the check for
// the new process, and every run would measure the old server. The start
// is refused, the process never started, with the reason.
func TestProcessReadyAnsweredByAnotherServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	marker := filepath.Join(t.TempDir(), "started")
	_, err := run(t, `backend.process(["sh", "-c", "touch `+marker+`; sleep 30"], ready = "`+srv.URL+`/health", ready_timeout = 5)`)
	if err == nil || !strings.Contains(err.Error(), "backend.process: ready check "+srv.URL+"/health passes before it started: another server answers there") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the process ran although its port was another server's")
	}
}

func TestProcessLifecycle(t *testing.T) {
	g := mustRun(t, `
p = backend.process(["sh", "-c", "echo listening $GREETING; while :; do :; done"], env = {"GREETING": "hi"}, ready = "log:^listening hi$")
assert.eq(p.url, None)
assert.true(p.pid > 0)
assert.true("listening hi" in p.logs())
assert.true(p.rss() > 0)
first = p.pid
p.restart()
assert.ne(p.pid, first)
`)
	p := g["p"].(*Handle)
	stop, err := p.StartObserving(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The busy loop runs until /proc says it has used 100 ms of CPU since
	// the observation began (a loaded box gives it a fraction of a core),
	// at most 10 s.
	cpu0, _ := procfs.TreeUsage(p.pid())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		if cpu, _ := procfs.TreeUsage(p.pid()); cpu-cpu0 >= 100*time.Millisecond {
			break
		}
	}
	f, err := stop(100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures: %v", f)
	if f["server_cpu_us"] < 50_000 || f["server_rss_peak_kb"] <= 0 || f["server_cpu_us_per_req"] != f["server_cpu_us"]/100 {
		t.Fatalf("a busy loop that used 100 ms of CPU: %v", f)
	}
	if u := runattrs.Unknown(runattrs.Names(f)); len(u) > 0 {
		t.Errorf("figures the table of run attributes (and the reference) does not list: %v", u)
	}
	if v, err := p.cpu(nil, "process.cpu", nil, nil); err != nil || float64(v.(starlark.Float)) < 0.05 {
		t.Fatalf("cpu() = %v, %v after a busy loop", v, err)
	}
	pid := p.pid()
	p.stop(time.Second)
	time.Sleep(50 * time.Millisecond)
	if _, ok := procfs.ReadProc(pid); ok {
		t.Fatalf("pid %d still running after stop", pid)
	}
}

// TestProcessFloodingStdoutIsBounded: a target that writes without end and
// without a newline (cat /dev/zero) leaves benchbook holding at most the
// ring's lines of kit.MaxLogLine bytes each. Before, the partial line grew by
// the target's whole output, until memory ran out.
func TestProcessFloodingStdoutIsBounded(t *testing.T) {
	g := mustRun(t, `p = backend.process(["sh", "-c", "echo ready; exec cat /dev/zero"], ready = "log:^ready$")`)
	p := g["p"].(*Handle)
	defer p.stop(time.Second)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		held := 0
		for _, l := range p.log.Tail(0) {
			held += len(l)
		}
		if held > 2000*(kit.MaxLogLine+64) {
			t.Fatalf("the ring holds %d bytes of a flood", held)
		}
	}
	last := p.log.Tail(1)
	if len(last) != 1 || len(last[0]) > kit.MaxLogLine+64 {
		t.Fatalf("last line of %d bytes", len(last[0]))
	}
}
