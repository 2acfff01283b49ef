package workload

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
)

// TestUsersArguments: users and think are read once, with errors that name
// the builtin and the argument, and a run of users says what it was given.
func TestUsersArguments(t *testing.T) {
	mustExec(t, `
u = "http://127.0.0.1:1/"
assert.fails(lambda: workload.http(u, users = 2, clients = 2, duration = "1s"), "workload.http: give users or clients, not both")
assert.fails(lambda: workload.http(u, users = 2, rate = 5, duration = "1s"), "workload.http: give users \\(closed loop\\) or rate")
assert.fails(lambda: workload.http(u, clients = 2, think = "1s", duration = "1s"), "workload.http: think applies to users: give users = N")
assert.fails(lambda: workload.http(u, rate = 5, think = "1s", duration = "1s"), "workload.http: think applies to users \\(a closed loop\\)")
assert.fails(lambda: workload.http(u, users = 0, duration = "1s"), "workload.http: users must be an int > 0, got 0")
assert.fails(lambda: workload.http(u, users = 2, think = "soon", duration = "1s"), "malformed think \"soon\" \\(want a duration such as \"1s\", or \"exp\\(1s\\)\"")
assert.fails(lambda: workload.http(u, users = 2, think = "exp(1s", duration = "1s"), "malformed think \"exp\\(1s\"")
assert.fails(lambda: workload.http(u, users = 2, think = "exp(0)", duration = "1s"), "exp\\(0\\) has no mean")
assert.fails(lambda: workload.http(u, users = 2, think = "2h", duration = "1s"), "think must be at most 1h0m0s")
assert.fails(lambda: workload.http(u, users = 2, think = -1, duration = "1s"), "workload.http")
assert.fails(lambda: workload.http(u, users = 2, tick = "1ms", duration = "1s"), "tick applies to an open loop \\(rate\\), not to users")
assert.fails(lambda: workload.http(u, duration = "1s"), "one of clients or users \\(closed loop\\) or rate \\(open loop\\) is required")
`, nil)
}

// TestUsersRun: a real run of users with exponential think against a
// loopback server that fails every fourth request: its attributes say what
// it was given and what arrived (think taken, arrival rate, no generator
// bound unless it says why), its error_rate is the server's own share of failures, and it
// stores and reads back with them.
func TestUsersRun(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%4 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	g := mustExec(t, `
r = workload.http(url, users = 8, think = "exp(10ms)", duration = "0.6s", warmup = "0.2s")
c = workload.http(url, clients = 2, duration = "0.3s", warmup = 0)
o = workload.http(url, rate = 200, duration = "0.3s", warmup = 0)
assert.eq(r.users, 8)
assert.eq(r.think, "exp(10ms)")
assert.eq(c.users, 2)
assert.eq(c.think, "")
assert.eq(c.think_ms, 0.0)
assert.eq(o.users, 0)
assert.eq(o.rate, 200.0)
assert.eq(r.rate, 0.0)
assert.true(r.arrival_rps == r.intended / r.duration)
assert.true(r.gen_cpu_share >= 0 and r.gen_cpu_share < 1, r.gen_cpu_share)
# gen_bound: the generator's CPU at 85 % of its CPUs, or users' sends late
# by more than 2 % of their cycle (a loaded box makes them so)
assert.eq(r.gen_bound, r.gen_cpu_share >= 0.85 or r.think_lag_ms > 0.02 * (r.mean + r.think_ms))
assert.true(r.think_lag_ms >= 0 and r.think_lag_ms < r.think_ms)
assert.eq(c.gen_bound, c.gen_cpu_share >= 0.85)
assert.eq(str(c.arrival_cv), "nan")  # no think
`, starlark.StringDict{"url": starlark.String(srv.URL)})
	r := g["r"].(*Run)
	think := r.thinkMs()
	if think < 10*0.8 || think > 10*1.3 {
		t.Errorf("think taken %.2f ms, asked exp(10ms)", think)
	}
	if cv := r.d.Gaps.CV(); math.IsNaN(cv) || cv < 0.5 || cv > 1.6 {
		t.Errorf("arrival_cv %.3f for 8 users with exponential think", cv)
	}
	failed := r.d.Errors["status 503"]
	if want := float64(failed) / float64(r.d.Count+failed); r.errorRate() != want || want < 0.2 || want > 0.3 {
		t.Errorf("error_rate %.3f, the server failed %d of %d (every fourth)", r.errorRate(), failed, r.d.Count+failed)
	}
	data, err := codec.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	v, err := codec.Decode(data, testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	back := v.(*Run)
	if back.d.Think != "exp(10ms)" || back.thinkMs() != think || back.d.Gaps != r.d.Gaps || back.d.GenShare != r.d.GenShare || back.d.Clients != 8 {
		t.Errorf("read back: think %q %.3f ms, gaps %+v, gen share %v; stored %q %.3f ms, %+v, %v",
			back.d.Think, back.thinkMs(), back.d.Gaps, back.d.GenShare, r.d.Think, think, r.d.Gaps, r.d.GenShare)
	}
}

// TestGenBound: the rule, on runs whose figures say each way.
func TestGenBound(t *testing.T) {
	for _, c := range []struct {
		share    float64
		think    string
		lagMs    float64 // over a cycle of the fixed run's mean latency + 100 ms of think
		agentSat bool
		want     bool
	}{
		{0.5, "", 0, false, false},
		{0.85, "", 0, false, true},
		{0.2, "100ms", 1.9, false, false},
		{0.2, "100ms", 2.1, false, true},
		{0.2, "", 50, false, false}, // no think: no lag counts
		{0.2, "", 0, true, true},
		{math.NaN(), "", 0, false, false},
	} {
		r := fixedRun()
		r.d.GenShare, r.d.Think, r.d.ThinkLagMs = c.share, c.think, c.lagMs
		r.d.Result.Think, r.d.Thinks = time.Duration(100e6-r.d.Hist.Mean()*1e3), 1 // cycle 100 ms
		if c.agentSat {
			r.d.Agents = []agentRow{{Name: "a"}, {Name: "b", Saturated: true}}
		}
		if got := r.genBound(); got != c.want {
			t.Errorf("%+v: gen_bound %v", c, got)
		}
	}
}

// TestSlowGeneratorIsBound: users whose request generator takes about
// 2 ms of the loop's time per request cannot be sent as their 5 ms think
// allows; most sends come late, the run says gen_bound, and the same users
// without the generator against the same server are sent less late, by
// more than the threshold.
// Whether that free run is gen_bound is the box's to decide (at load 6 on
// 2 cores its sends are late by 0.3 ms of a 5 ms cycle: truly, the
// generator's process waited for a CPU), so the slow run is held to being
// later than the free one by more than the threshold, and the free one to
// not gen_bound on a box that was not busy.
func TestSlowGeneratorIsBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	g := mustExec(t, `
def slow(seq):
    x = 0
    for i in range(8000):
        x += i
    return "/?n=%d" % x
bound = workload.http(url, users = 20, think = "5ms", request = slow, duration = "0.5s", warmup = "0.2s")
free = workload.http(url, users = 20, think = "5ms", duration = "0.5s", warmup = "0.2s")
`, starlark.StringDict{"url": starlark.String(srv.URL)})
	b, f := g["bound"].(*Run), g["free"].(*Run)
	t.Logf("slow generator: think lag %.2f ms of a %.2f ms cycle (latency p50 %.3f ms), gen_bound %v; free: %.3f ms of %.2f ms (latency p50 %.3f ms), %v, busy box %v",
		b.d.ThinkLagMs, b.d.Hist.Mean()/1000+b.thinkMs(), loadgen.QuantileMs(b.d.Hist, 50), b.genBound(),
		f.d.ThinkLagMs, f.d.Hist.Mean()/1000+f.thinkMs(), loadgen.QuantileMs(f.d.Hist, 50), f.genBound(), busyBox(f))
	if !b.genBound() {
		t.Errorf("a generator behind its users is not gen_bound (think lag %.2f ms)", b.d.ThinkLagMs)
	}
	// A busy box delays both runs' sends; the slow generator's own part,
	// beyond what the same users are late without it, must be more than
	// gen_bound's threshold.
	if b.thinkLagShare()-f.thinkLagShare() <= MaxThinkLagShare {
		t.Errorf("users with a slow generator are sent late by %.3f of their cycle, with a free one %.3f: the generator's part is under %.2f",
			b.thinkLagShare(), f.thinkLagShare(), MaxThinkLagShare)
	}
	if f.genBound() && f.d.GenShare < 0.85 && !busyBox(f) {
		t.Errorf("users with a free generator on a quiet box are gen_bound (think lag %.3f ms)", f.d.ThinkLagMs)
	}
}

// busyBox says whether the run's record says other processes shared the box.
func busyBox(r *Run) bool {
	for _, w := range r.d.Warnings {
		if strings.HasPrefix(w, busybox.BusyPrefix) {
			return true
		}
	}
	return false
}
