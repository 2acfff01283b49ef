package profile

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// needPerf stops the test when perf is missing (a failure under CI, which
// installs linux-perf).
func needPerf(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		needs.Missing(t, "perf", "apt-get install linux-perf")
	}
}

var (
	hotOnce sync.Once
	hotBin  string
	hotErr  error
)

// hotServerBinary builds testdata/hotserver once per test binary.
func hotServerBinary(t *testing.T) string {
	t.Helper()
	hotOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hotserver-")
		if err != nil {
			hotErr = err
			return
		}
		hotBin = filepath.Join(dir, "hotserver")
		out, err := exec.Command("go", "build", "-o", hotBin, "./testdata/hotserver").CombinedOutput()
		if err != nil {
			hotErr = err
			t.Logf("%s", out)
		}
	})
	if hotErr != nil {
		t.Fatalf("building hotserver: %v", hotErr)
	}
	return hotBin
}

// hotServer is one running arm of the test target.
type hotServer struct {
	cmd  *exec.Cmd
	addr string
}

func startHotServer(t *testing.T, arm string) *hotServer {
	t.Helper()
	cmd := exec.Command(hotServerBinary(t), "-arm", arm)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		t.Fatalf("hotserver: %q, %v", line, err)
	}
	return &hotServer{cmd: cmd, addr: strings.TrimSpace(strings.TrimPrefix(line, "listening "))}
}

func (h *hotServer) pid() int { return h.cmd.Process.Pid }

// load sends requests from clients over loopback for d (closed loop) and
// returns how many succeeded.
func load(t *testing.T, addr string, clients int, d time.Duration) int64 {
	return loadN(t, addr, clients, 0, d)
}

// loadN sends requests until want have succeeded (0: no such bound) or d
// has passed, and returns how many succeeded: a busy box slows the run
// down instead of thinning it out.
func loadN(t *testing.T, addr string, clients int, want int64, d time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	var n atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
				resp, err := cl.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && ctx.Err() == nil {
					if n.Add(1) == want {
						cancel()
					}
				}
			}
		})
	}
	wg.Wait()
	return n.Load()
}

// cpuUs is a process's CPU time so far, in µs: the sum of its threads'
// run time from /proc/PID/task/*/schedstat (ns; a Go server's threads
// live as long as it does).
func cpuUs(t *testing.T, pid int) float64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("/proc", itoa(pid), "task", "*", "schedstat"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no threads of %d: %v", pid, err)
	}
	var ns int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that just exited
		}
		ns += atoiT(t, strings.Fields(string(data))[0])
	}
	return float64(ns) / 1e3
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoiT(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// stopSpinners ends burners as soon as their samples are in: each burns
// a core, and the profile is still being read (perf script) when a test
// is done with them.
func stopSpinners(cmds ...*exec.Cmd) {
	for _, c := range cmds {
		c.Process.Kill()
	}
}

// spinner runs the hot server's CPU burner for d (at most: stopSpinners
// ends it, and so does the test's end).
func spinner(t *testing.T, d time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(hotServerBinary(t), "-spin", d.String())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func functionsByName(p *Profile) map[string]Function {
	out := map[string]Function{}
	for _, f := range p.Functions() {
		out[f.Name] = f
	}
	return out
}

// TestMain removes the hot server binary the tests built.
func TestMain(m *testing.M) {
	child.RunMode(child.Supervisor) // it re-executes the test binary
	code := m.Run()
	if hotBin != "" {
		os.RemoveAll(filepath.Dir(hotBin))
	}
	os.Exit(code)
}
