package backend

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/procfs"
	"github.com/benchbook/benchbook/builtins/internal/runattrs"
	"github.com/benchbook/benchbook/runtime"
)

// orphanHelper is the test binary re-executed as a benchbook that starts a
// cluster and a target and then blocks until it is killed.
func orphanHelper(dir string) {
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: dir, CacheDir: dir}
	th := s.NewThread(&runtime.Cell{Name: "orphan", Key: "feedfacefeedface"})
	g, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "orphan.star", `
pg = backend.postgres()
pg.exec("SELECT 1")
target = backend.process(["sleep", "1000"])
`, runtime.Predeclared())
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	pg := g["pg"].(*pgHandle)
	fmt.Printf("PIDS %d %d %s\n", pg.postmasterPID(), g["target"].(*procHandle).pid(), pg.c.dataDir())
	select {}
}

// startHelper re-executes this test binary as a benchbook with env set,
// which starts what the test needs and prints one line about it; the
// helper is killed when the test ends.
func startHelper(t *testing.T, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck // often gone already
	line, _ := bufio.NewReader(out).ReadString('\n')
	return cmd, line
}

func TestOrphansDieWithBenchbook(t *testing.T) {
	dir, err := os.MkdirTemp("", "bbpg-orphan-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd, line := startHelper(t, "BACKEND_ORPHAN_HELPER="+dir)
	var postmaster, target int
	var dataDir string
	if _, err := fmt.Sscanf(line, "PIDS %d %d %s", &postmaster, &target, &dataDir); err != nil {
		t.Fatalf("helper said %q: %v", line, err)
	}
	children := []int{postmaster, target}
	for _, p := range procfs.Tree(postmaster) {
		children = append(children, p.PID)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := alive(children, dataDir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running 10s after benchbook was killed: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive lists the pids still running, plus any process whose command line
// names dataDir.
func alive(pids []int, dataDir string) []string {
	var left []string
	for _, pid := range pids {
		if p, ok := procfs.ReadProc(pid); ok {
			left = append(left, fmt.Sprintf("%d %q", pid, p.Cmdline))
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if p, ok := procfs.ReadProc(pid); ok && strings.Contains(p.Cmdline, dataDir) {
			left = append(left, fmt.Sprintf("%d %q", pid, p.Cmdline))
		}
	}
	return left
}

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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	mustRun(t, `
p = backend.process("sleep 30", ready = "`+srv.URL+`/health", ready_timeout = 5)
assert.true(p.pid > 0)
assert.eq(p.url, "`+srv.URL+`")  # scheme and host of the ready check
p.stop(grace = "100ms")
assert.eq(p.pid, None)
`)
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
	p := g["p"].(*procHandle)
	stop, err := p.StartObserving(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	f, err := stop(100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures: %v", f)
	if f["server_cpu_us"] < 50_000 || f["server_rss_peak_kb"] <= 0 || f["server_cpu_us_per_req"] != f["server_cpu_us"]/100 {
		t.Fatalf("a busy loop for 300 ms: %v", f)
	}
	if u := runattrs.Unknown(runattrs.Names(f)); len(u) > 0 {
		t.Errorf("figures the table of run attributes (and the README) does not list: %v", u)
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

func TestBuild(t *testing.T) {
	repo := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitc := func(args ...string) string {
		out, err := git(context.Background(), repo, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	gitc("init", "-q")
	write("go.mod", "module example.com/hello\n\ngo 1.22\n")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"hello v1\") }\n")
	gitc("add", ".")
	gitc("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "v1")
	v1 := gitc("rev-parse", "HEAD")
	src := fmt.Sprintf(`
b = build("./cmd/hello", rev = "HEAD", repo = %q)
assert.eq(b.rev, %q)
assert.eq(len(b.sha256), 64)
assert.true(not b.dirty)
p = backend.process(b, ready = "log:hello v1")
`, repo, v1)
	g := mustRun(t, src)
	b1 := g["b"].(*binaryValue).b
	start := time.Now()
	g = mustRun(t, src) // the same revision: from the cache
	if b2 := g["b"].(*binaryValue).b; b2 != b1 || time.Since(start) > 2*time.Second {
		t.Fatalf("rebuilt the same revision: %+v vs %+v in %s", b1, b2, time.Since(start))
	}
	h1, _ := gitInputHash(repo + "@HEAD")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"hello v2\") }\n")
	if h, _ := gitInputHash(repo + "@"); !strings.Contains(h, "+") {
		t.Fatalf("working tree input %q does not say dirty", h)
	}
	gitc("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "v2")
	if h2, _ := gitInputHash(repo + "@HEAD"); h2 == h1 {
		t.Fatal("a new commit left the git input unchanged")
	}
	g = mustRun(t, fmt.Sprintf(`
b = build("./cmd/hello", repo = %q)
p = backend.process(b, ready = "log:hello v2")
`, repo))
	if b3 := g["b"].(*binaryValue).b; b3.SHA256 == b1.SHA256 || b3.Rev == b1.Rev {
		t.Fatalf("new revision, same binary: %+v", b3)
	}
	_, err := run(t, fmt.Sprintf(`build("./cmd/hello", rev = "no-such-rev", repo = %q)`, repo))
	if err == nil || !strings.Contains(err.Error(), "build: rev \"no-such-rev\"") {
		t.Fatalf("error %v", err)
	}
}

func TestSQLite(t *testing.T) {
	mustRun(t, `
db = backend.sqlite(":memory:")
db.exec("CREATE TABLE t (id INTEGER, v TEXT)")
assert.eq(db.exec("INSERT INTO t VALUES (?, ?), (?, ?)", 1, "a", 2, "b"), 2)
rows = db.query("SELECT id, v FROM t ORDER BY id")
assert.eq(len(rows), 2)
assert.eq(rows[1]["v"], "b")
`)
}

// TestProcessFloodingStdoutIsBounded: a target that writes without end and
// without a newline (cat /dev/zero) leaves benchbook holding at most the
// ring's lines of maxLogLine bytes each. Before, the partial line grew by
// the target's whole output, until memory ran out.
func TestProcessFloodingStdoutIsBounded(t *testing.T) {
	g := mustRun(t, `p = backend.process(["sh", "-c", "echo ready; exec cat /dev/zero"], ready = "log:^ready$")`)
	p := g["p"].(*procHandle)
	defer p.stop(time.Second)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		held := 0
		for _, l := range p.log.tail(0) {
			held += len(l)
		}
		if held > 2000*(maxLogLine+64) {
			t.Fatalf("the ring holds %d bytes of a flood", held)
		}
	}
	last := p.log.tail(1)
	if len(last) != 1 || len(last[0]) > maxLogLine+64 {
		t.Fatalf("last line of %d bytes", len(last[0]))
	}
}

// TestLogRingCutsLongLines: long lines are cut and marked, short ones kept
// whole, and the count of lines stays at the ring's size.
func TestLogRingCutsLongLines(t *testing.T) {
	r := newLogRing(3)
	big := bytes.Repeat([]byte("x"), 3*maxLogLine)
	r.Write(big)
	r.Write(big)
	r.Write([]byte("\nshort\none\ntwo\n"))
	got := r.tail(0)
	if len(got) != 3 || got[0] != "short" || got[2] != "two" {
		t.Fatalf("tail = %.200q", got)
	}
	r = newLogRing(3)
	r.Write(append(big, '\n'))
	if l := r.tail(0)[0]; len(l) > maxLogLine+64 || !strings.Contains(l, "line cut at") {
		t.Fatalf("a long line kept %d bytes: %.100q", len(l), l)
	}
}
