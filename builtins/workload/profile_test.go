package workload

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

func needPerf(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		needs.Missing(t, "perf", "apt-get install linux-perf")
	}
}

// hotServer builds the profiler's test target (a server whose arm A
// spends five times hotB's work in hotA) into a test directory.
func hotServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hotserver")
	out, err := exec.Command("go", "build", "-o", bin, "../internal/profile/testdata/hotserver").CombinedOutput()
	if err != nil {
		t.Fatalf("building hotserver: %v\n%s", err, out)
	}
	return bin
}

// startHot runs the hot server's arm A and returns its URL and pid.
func startHot(t *testing.T, bin string) (url string, pid int) {
	t.Helper()
	cmd := exec.Command(bin, "-arm", "A")
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
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening ")) + "/", cmd.Process.Pid
}

// cpuUsOf is a process's CPU so far (its threads' run time), µs.
func cpuUsOf(t *testing.T, pid int) float64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	var ns float64
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			v, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
			ns += v
		}
	}
	return ns / 1e3
}

// A run with profile samples its target over the measured window only:
// with a warm-up as long as the window, the samples stand for about half
// the CPU the server used in the whole run; the figures per request are
// the run's; the profile names the hot function and survives the codec.
func TestProfileSamplesTheWindowOnly(t *testing.T) {
	needPerf(t)
	url, pid := startHot(t, hotServer(t))
	c0 := cpuUsOf(t, pid)
	g := mustExec(t, `
r = workload.http(url, clients = 2, duration = "1s", warmup = "1s", profile = [pid])
p = r.profile
assert.eq(p.requests, r.count)
assert.eq(p.targets, ["pid %d" % pid])
assert.true(p.samples > 50)
hot = p.function("main.hotA")
assert.true(hot.total_share > 0.2)  # the kernel takes much of a busy box's share
assert.true(hot.total_share > 1.5 * p.function("main.hotB").total_share)  # ~2.5 (testdata/hotserver)
assert.true(abs(hot.us_per_req - hot.total_share * p.us_per_req) < 1e-6 * p.us_per_req)
assert.true(abs(p.us_per_req * p.requests - p.cpu_ms * 1000) < 1e-6 * p.cpu_ms * 1000)
assert.eq(p.functions[0].total_share, max([f.total_share for f in p.functions]))
assert.true("main.hotA" in p.folded)
assert.eq(p.function("no.such"), None)
`, starlark.StringDict{"url": str(url), "pid": starlark.MakeInt(pid)})
	all := cpuUsOf(t, pid) - c0
	p := g["p"].(*starprofile.Value)
	sampled := float64(p.Data().CPUNs) / 1e3
	t.Logf("%s; the server used %.0f µs in the whole run, the samples stand for %.0f (%.2f)", p, all, sampled, sampled/all)
	if r := sampled / all; r < 0.3 || r > 0.7 {
		t.Errorf("the samples stand for %.2f of the CPU of a run with a warm-up as long as its window: want about half", r)
	}
	if w := p.Data().WindowS; w < 0.9 || w > 1.2 {
		t.Errorf("sampled for %.2f s of a 1 s window", w)
	}
	r := g["r"].(*Run)
	data, err := codec.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	b, err := back.(*Run).Attr("profile")
	if err != nil {
		t.Fatal(err)
	}
	if eq, err := starlark.Equal(b, p); err != nil || !eq || b.String() != p.String() {
		t.Errorf("the run read back has profile %s, %v", b, err)
	}
}

// workload.exec with profile = True samples the command it runs, not
// benchbook: every stack is the command's, none the test binary's own.
func TestProfileExecSamplesTheCommand(t *testing.T) {
	needPerf(t)
	bin := hotServer(t)
	g := mustExec(t, `
r = workload.exec([bin, "-spin", "300ms"], runs = 2, warmup = 1, profile = True)
p = r.profile
assert.eq(p.requests, 2)
assert.eq(p.targets, ["command hotserver"])
assert.true(p.function("main.hotA").total_share > 0.5)
`, starlark.StringDict{"bin": str(bin)})
	p := g["p"].(*starprofile.Value)
	folded := string(mustAttr(t, p, "folded").(starlark.String))
	if strings.Contains(folded, "testing.tRunner") || strings.Contains(folded, "starlark.") {
		t.Errorf("the test binary's own stacks are in the profile of the command it ran")
	}
	// The measured runs' CPU, as wait4 gave it for each, not the warm-up's.
	var measured float64
	for _, ms := range g["r"].(*Run).d.CPUMs {
		measured += ms
	}
	cpu := float64(p.Data().CPUNs) / 1e6
	t.Logf("%s; wait4 says the measured runs used %.0f ms", p, measured)
	if cpu < 0.8*measured || cpu > 1.25*measured {
		t.Errorf("the samples stand for %.0f ms of CPU, the two measured runs used %.0f ms", cpu, measured)
	}
}

func mustAttr(t *testing.T, v starlark.HasAttrs, name string) starlark.Value {
	t.Helper()
	x, err := v.Attr(name)
	if err != nil || x == nil {
		t.Fatalf("no .%s: %v", name, err)
	}
	return x
}

// Bad profile arguments are errors naming the builtin and the argument.
func TestProfileArgumentErrors(t *testing.T) {
	for src, want := range map[string]string{
		`workload.http("http://127.0.0.1:1/", clients = 1, duration = "0.1s", profile = "yes")`:  `workload.http: for parameter "profile": want True, False or a list of targets`,
		`workload.http("http://127.0.0.1:1/", clients = 1, duration = "0.1s", profile = [])`:     `for parameter "profile": an empty list of targets`,
		`workload.http("http://127.0.0.1:1/", clients = 1, duration = "0.1s", profile = ["db"])`: `workload.http: profile\[0\]: a string cannot be profiled`,
		`workload.http("http://127.0.0.1:1/", clients = 1, duration = "0.1s", profile = [-3])`:   `workload.http: profile\[0\]: pid must be > 0`,
		`workload.http("http://127.0.0.1:1/", clients = 1, duration = "0.1s", profile = True)`:   `workload.http: profile = True: no target to sample`,
		`workload.exec(["true"], runs = 1, profile = 1.5)`:                                       `workload.exec: for parameter "profile": want True, False or a list`,
	} {
		_, err := execStar(t, t.Context(), src, nil)
		if err == nil || !regexp.MustCompile(want).MatchString(err.Error()) {
			t.Errorf("%s:\n  error %v\n  want %s", src, err, want)
		}
	}
}

// A missing perf and a kernel that forbids the sampling reach the
// notebook as the builtin's errors, naming the package to install or the
// sysctl, before any load is sent.
func TestProfilePerfErrorsReachTheNotebook(t *testing.T) {
	needPerf(t)
	url, pid := startHot(t, hotServer(t))
	globals := starlark.StringDict{"url": str(url), "pid": starlark.MakeInt(pid)}
	src := `workload.http(url, clients = 1, duration = "0.2s", profile = [pid])`

	t.Run("missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := execStar(t, t.Context(), src, globals)
		if err == nil || !strings.Contains(err.Error(), "workload.http: profile: perf not found") || !strings.Contains(err.Error(), "linux-perf") {
			t.Errorf("without perf on PATH: %v", err)
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		perf, _ := exec.LookPath("perf")
		if os.Geteuid() != 0 {
			t.Skip("needs root to run perf as another user")
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			needs.Missing(t, "setpriv", "apt-get install util-linux")
		}
		dir := t.TempDir()
		wrapper := "#!/bin/sh\nexec setpriv --reuid=nobody --regid=nogroup --clear-groups " + perf + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, "perf"), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
		start := time.Now()
		_, err := execStar(t, t.Context(), src, globals)
		if err == nil || !strings.Contains(err.Error(), "workload.http: profile: the kernel forbids this sampling") || !strings.Contains(err.Error(), "kernel.perf_event_paranoid") {
			t.Errorf("perf as nobody: %v", err)
		}
		t.Logf("%v (after %s)", err, time.Since(start))
	})
}

// TestProfileHz: profile_hz sets perf's sampling rate; the oracle is the
// server's CPU from /proc over the run, which the samples must match at
// that rate (the default, 499 Hz, costs the target +18.6 % CPU per
// request here, 99 Hz +3.3 %: bench/profile).
func TestProfileHz(t *testing.T) {
	needPerf(t)
	url, pid := startHot(t, hotServer(t))
	c0 := cpuUsOf(t, pid)
	g := mustExec(t, `
r = workload.http(url, clients = 2, duration = "1s", warmup = 0, profile = [pid], profile_hz = 99)
assert.eq(int(r.profile.hz + 0.5), 99)
`, starlark.StringDict{"url": str(url), "pid": starlark.MakeInt(pid)})
	cpuS := (cpuUsOf(t, pid) - c0) / 1e6
	d := g["r"].(*Run).d.Profile
	if rate := float64(d.Samples) / cpuS; rate < 60 || rate > 130 {
		t.Errorf("%d samples for %.2f s of the server's CPU: %.0f a CPU-second, want about 99", d.Samples, cpuS, rate)
	}
}
