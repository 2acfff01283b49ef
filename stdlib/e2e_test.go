package stdlib_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestABABWithRealRuns drives a real HTTP server through abab with
// workload.http: arm B's handler is 20 ms slower, so compare must say that B
// WORSENS latency, and the experiment, the comparison and the verdict must
// be storable.
func TestABABWithRealRuns(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("arm") == "B" {
			// 20 ms, well above what a loaded box adds to A's median
			// (at load 7.5, with 3 ms, A's spread reached 470 %).
			time.Sleep(20 * time.Millisecond)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	o := options(t)
	o.Globals["url"] = starlark.String(srv.URL)
	g := startest.MustExec(t, o, `
load("@std/abab.star", "abab")

def one(arm):
    return workload.http(url + "/?arm=" + arm, clients = 2, duration = "0.3s", warmup = "0.1s")

exp = abab(arms = {"A": None, "B": None}, pairs = 6, run = one)  # 6: the fewest pairs a paired test can reach p <= 0.05 with
cmp = compare(exp, metric = lambda r: r.p(50), name = "p50", better = "lower")
v = verdict(status = "reverted", headline = cmp, summary = "the sleep makes it slower")
`)
	cmp := g["cmp"].(starlark.HasAttrs)
	verdict, _ := cmp.Attr("verdict")
	if verdict != starlark.String("WORSENS") {
		s, _ := cmp.Attr("sentence")
		t.Errorf("verdict %s, want WORSENS: %s", verdict, s)
	}
	for _, name := range []string{"exp", "cmp", "v"} {
		data, err := codec.Encode(g[name])
		if err != nil {
			t.Fatalf("%s not storable: %v", name, err)
		}
		if _, err := codec.Decode(data, runtime.MustModuleSet(nil, modules()...).Decoders()); err != nil {
			t.Fatalf("%s does not decode: %v", name, err)
		}
	}
}

// TestProgressNamesPairAndArm: the live lines of an experiment's runs did
// not say which pair and arm was running (issue 33). Each abab run's line
// starts "pair P/N ARM", a sweep's "sweep I/N k=v", a soak's "window I/N".
func TestProgressNamesPairAndArm(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	var stderr strings.Builder
	o := options(t)
	o.Stderr = &stderr
	o.Globals["url"] = starlark.String(srv.URL)
	startest.MustExec(t, o, `
load("@std/abab.star", "abab")
load("@std/sweep.star", "sweep")
load("@std/soak.star", "soak")
def one(arm):
    return workload.http(url, clients = 1, duration = "1.2s", warmup = "0s", label = "GET /")
exp = abab(arms = {"A": None, "B": None}, pairs = 2, run = one)
grid = sweep({"clients": [1, 2]}, lambda clients: workload.http(url, clients = clients, duration = "1.2s", warmup = "0s"))
s = soak(lambda w: workload.http(url, clients = 1, duration = w.seconds, warmup = "0s"), duration = "2.4s", window = "1.2s")
`)
	for _, want := range []string{"pair 1/2 A  GET /", "pair 1/2 B  GET /", "pair 2/2 B  GET /", "pair 2/2 A  GET /",
		"sweep 1/2 clients=1  GET ", "sweep 2/2 clients=2  GET ", "window 1/2  GET ", "window 2/2  GET "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("no progress line starts %q:\n%s", want, stderr.String())
		}
	}
}

// TestCompareRefusesAFailingRun: compare's error-share rule (issue 33) on
// real runs, not stand-ins. Arm B's target answers every other request
// with a 503, so half of each B run failed: compare refuses the
// experiment naming the run and its share, and allow_errors = True takes
// it with the same words as a warning.
func TestCompareRefusesAFailingRun(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("arm") == "B" && n.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	o := options(t)
	o.Globals["url"] = starlark.String(srv.URL)
	g := startest.MustExec(t, o, `
load("@std/abab.star", "abab")
def one(arm):
    return workload.http(url + "/?arm=" + arm, clients = 1, duration = "0.3s", warmup = "0s")
exp = abab(arms = {"A": None, "B": None}, pairs = 2, run = one)
b1 = exp.runs["B"][0]
failed = b1.errors.get("status 503", 0)
def refused():
    compare(exp, metric = "rps")
taken = compare(exp, metric = "rps", allow_errors = True)
`)
	// The share the target was built to give, counted by the run itself
	// (every request B sent either succeeded or got its 503).
	b1 := g["b1"].(starlark.HasAttrs)
	failed := intAttr(t, g["failed"])
	intended := intAttr(t, attr(t, b1, "intended"))
	if count := intAttr(t, attr(t, b1, "count")); count+failed != intended || intended < 20 {
		t.Fatalf("B run 1: %d ok + %d failed != %d intended (or too few to judge)", count, failed, intended)
	}
	share := 100 * float64(failed) / float64(intended)
	if share < 45 || share > 55 {
		t.Fatalf("B run 1 failed %.1f %%, the target fails every other request", share)
	}
	what := fmt.Sprintf("B run 1: %.1f %% of its requests failed (%d of %d: status 503 %d)", share, failed, intended, failed)

	_, err := starlark.Call(&starlark.Thread{}, g["refused"], nil, nil)
	if err == nil || !strings.Contains(err.Error(), "compare: "+what+", more than 1 %") || !strings.Contains(err.Error(), "allow_errors = True") {
		t.Errorf("compare of a run half of which failed: %v, want a refusal naming %q", err, what)
	}
	warnings := attr(t, g["taken"].(starlark.HasAttrs), "warnings")
	if !strings.Contains(warnings.String(), what+"; taken anyway (allow_errors = True)") {
		t.Errorf("allow_errors = True: warnings %s, want %q", warnings, what)
	}
	if regexp.MustCompile(`A run \d+: [0-9.]+ % of its requests failed`).MatchString(warnings.String()) {
		t.Errorf("arm A did not fail, yet: %s", warnings)
	}
}

func attr(t *testing.T, v starlark.HasAttrs, name string) starlark.Value {
	t.Helper()
	a, err := v.Attr(name)
	if err != nil || a == nil {
		t.Fatalf("%s has no %s: %v", v.Type(), name, err)
	}
	return a
}

func intAttr(t *testing.T, v starlark.Value) int64 {
	t.Helper()
	n, err := starlark.AsInt32(v)
	if err != nil {
		t.Fatalf("%v is not an int: %v", v, err)
	}
	return int64(n)
}

// TestPerTagComparison: arm B's writes are 15 ms slower and its reads as
// fast as A's. A mix's runs compared on the whole run blur the two;
// compared per tag, "p50[write]" WORSENS and "p50[read]" does not, and a
// metric function that reads a tag names it in the comparison's label.
func TestPerTagComparison(t *testing.T) {
	arm := func(slowWrites bool) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if slowWrites && r.Method == "POST" {
				time.Sleep(15 * time.Millisecond)
			}
			io.WriteString(w, "ok")
		}))
	}
	a, b := arm(false), arm(true)
	defer a.Close()
	defer b.Close()
	o := options(t)
	o.Globals["urls"] = starlark.NewDict(2)
	o.Globals["urls"].(*starlark.Dict).SetKey(starlark.String("A"), starlark.String(a.URL))
	o.Globals["urls"].(*starlark.Dict).SetKey(starlark.String("B"), starlark.String(b.URL))
	g := startest.MustExec(t, o, `
load("@std/abab.star", "abab")

def one(arm):
    return workload.http(urls[arm], requests = [{"url": "/r", "tag": "read", "weight": 3}, {"url": "/w", "method": "POST", "tag": "write"}],
                         clients = 4, duration = "0.3s", warmup = "0.1s")

exp = abab(arms = {"A": None, "B": None}, pairs = 6, run = one)
writes = compare(exp, metric = "p50[write]")
reads = compare(exp, metric = "p50[read]")
fn = compare(exp, metric = lambda r: r.by_tag["write"].p(50), better = "lower")
assert.eq(writes.metric, "p50[write]")
assert.eq(fn.metric, "metric[write]")
assert.eq(writes.better, "lower")
assert.fails(lambda: compare(exp, metric = "p50[nope]"), 'run has no tag "nope" \\(its tags: "read", "write"\\)')
read_p90 = {arm: [r.by_tag["read"].p(90) for r in exp.runs[arm]] for arm in ["A", "B"]}
write_p50_b = [r.by_tag["write"].p(50) for r in exp.runs["B"]]
`)
	for name, want := range map[string]string{"writes": "WORSENS", "fn": "WORSENS"} {
		if v, _ := g[name].(starlark.HasAttrs).Attr("verdict"); v != starlark.String(want) {
			s, _ := g[name].(starlark.HasAttrs).Attr("sentence")
			t.Errorf("%s: verdict %s, want %s: %s", name, v, want, s)
		}
	}
	// Reads are not charged with the writes' wait: B's server sleeps 15 ms
	// on a write only; were writes (a quarter of the requests) counted in
	// the read tag, its p90 would be >= 15 ms. (reads' verdict itself is
	// not asserted: with
	// fewer requests in flight a read of B can be slower by some µs, woken
	// from an idler CPU, a real effect p50 of 100 µs shows.)
	floats := func(v starlark.Value) []float64 {
		var xs []float64
		for x := range v.(*starlark.List).Elements() {
			f, _ := starlark.AsFloat(x)
			xs = append(xs, f)
		}
		return xs
	}
	for _, arm := range []string{"A", "B"} {
		v, _, _ := g["read_p90"].(*starlark.Dict).Get(starlark.String(arm))
		for i, p := range floats(v) {
			if p >= 15 {
				t.Errorf("%s run %d: the reads' p90 %.1f ms >= the writes' 15 ms sleep", arm, i, p)
			}
		}
	}
	for i, p := range floats(g["write_p50_b"]) {
		if p < 15 {
			t.Errorf("B run %d: the writes' p50 %.1f ms < their 15 ms sleep", i, p)
		}
	}
}
