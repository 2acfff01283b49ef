package workload

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// testModule is the workload module as a benchbook without -tags
// kubernetes has it.
func testModule() runtime.Module { return Module(Options{}) }

// execStar runs src with the workload module, assert and globals.
func execStar(t *testing.T, ctx context.Context, src string, globals starlark.StringDict) (starlark.StringDict, error) {
	t.Helper()
	return startest.Exec(t, startest.Options{Ctx: ctx, Modules: []runtime.Module{testModule()}, Globals: globals}, src)
}

func mustExec(t *testing.T, src string, globals starlark.StringDict) starlark.StringDict {
	t.Helper()
	return startest.MustExec(t, startest.Options{Modules: []runtime.Module{testModule()}, Globals: globals}, src)
}

func str(s string) starlark.String { return starlark.String(s) }

func TestHTTPClosedLoopCountsWindowsAndCodec(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%10 == 0 {
			w.WriteHeader(500)
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	g := mustExec(t, `
r = workload.http(url, clients = 4, duration = "1.5s", warmup = "300ms", window = "500ms")
assert.eq(r.kind, "http")
assert.true(r.count > 100)
assert.true(r.errors["status 500"] > 0)
assert.eq(len(r.windows), 3)
assert.true(r.windows[0].count > 0 and r.windows[2].count > 0)
assert.true(r.windows[1].start == 0.5)
assert.true(abs(r.rps - r.count / r.duration) < 0.001)
assert.true(0 < r.p(50) and r.p(50) <= r.p(99) and r.p(99) <= r.max)
assert.true(r.mean > 0)
assert.eq(r.hist.count, r.count + r.errors["status 500"])  # failures count, as lower bounds
assert.eq(r.ok_hist.count, r.count)
assert.eq(r.intended, r.count + r.errors["status 500"])
assert.true(r.ok_p(99) <= r.ok_hist.max)
assert.true(any(["lower bounds" in w for w in r.warnings]))
assert.eq(r.interrupted, False)
assert.true(r.gen_cpu_us_per_req > 0)
assert.true(r.gen_gc_pause_ms >= 0 and r.gen_gc_pause_ms < r.duration * 1000)
assert.fails(lambda: r.p(101), "q must be a number in 0..100")
`, starlark.StringDict{"url": str(srv.URL + "/hello")})
	r := g["r"].(*Run)
	total := r.d.Count + sumErrors(r.d.Errors)
	if total >= served.Load() {
		t.Errorf("warmup not excluded: run has %d requests, server saw %d", total, served.Load())
	}
	data, err := codec.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	r2 := back.(*Run)
	if r2.Hdr().TotalCount() != r.Hdr().TotalCount() || r2.d.Errors["status 500"] != r.d.Errors["status 500"] || len(r2.d.Windows) != 3 ||
		r2.d.GCPause != r.d.GCPause {
		t.Errorf("codec round trip lost data: %v vs %v", r2, r)
	}
	// A histogram compares by its counts: the decoded one equals the
	// original, the successes' one does not (it lacks the failures). A run
	// compares by content (issue 33): read back twice it equals itself,
	// and one failure more makes it another run.
	r3, _ := codec.Decode(data, testModule().Decoders)
	r4, _ := codec.Decode(data, testModule().Decoders)
	r4.(*Run).d.Errors["status 500"]++
	for _, c := range []struct {
		a, b starlark.Value
		eq   bool
	}{{&Histogram{h: r.d.Hist}, &Histogram{h: r2.d.Hist}, true}, {&Histogram{h: r.d.Hist}, &Histogram{h: r.d.OK}, false},
		{r, r2, true}, {r2, r3, true}, {r, r4, false}} {
		if eq, err := starlark.Equal(c.a, c.b); err != nil || eq != c.eq {
			t.Errorf("%s == %s: %v, %v; want %v", c.a, c.b, eq, err, c.eq)
		}
	}
	if !strings.Contains(r.Markdown(), "| run |") || !strings.Contains(r.HTML(), "<table") {
		t.Errorf("displays: %q", r.Markdown())
	}
}

func TestHTTPErrorClasses(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	start := time.Now()
	mustExec(t, `
r = workload.http(refused, clients = 2, duration = "300ms", warmup = 0)
assert.true(r.errors["refused"] > 0)
assert.eq(r.count, 0)
s = workload.http(slow, clients = 2, duration = "500ms", warmup = 0, timeout = "200ms")
assert.true(s.errors["timeout"] >= 2)
o = workload.http(slow, rate = 50, duration = "500ms", warmup = 0, timeout = "200ms")
assert.true(o.errors["timeout"] >= 10)
`, starlark.StringDict{"refused": str(refused), "slow": str(slow.URL)})
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("runs took %s: something waited past duration + timeout", el)
	}
}

func TestBadInput(t *testing.T) {
	cases := map[string]string{
		`workload.http("http://x/", rate = -5, duration = "1s")`:                                      "workload.http: rate must be > 0, got -5",
		`workload.http("http://x/", rate = 5, clients = 2, duration = "1s")`:                          "not both",
		`workload.http("http://x/", duration = "1s")`:                                                 "one of clients",
		`workload.http("ftp//x", clients = 1, duration = "1s")`:                                       "workload.http: url: malformed URL",
		`workload.http("http://x/", clients = 1, duration = "1x")`:                                    `workload.http: for parameter "duration": malformed duration`,
		`workload.http("http://x/", clients = 1)`:                                                     "workload.http: duration is required",
		`workload.http("http://x/", clients = 0, duration = "1s")`:                                    "clients must be an int > 0",
		`workload.http("http://x/", rate = 5, duration = "1s", arrival = "x")`:                        "arrival must be",
		`workload.http("http://x/", clients = 1, duration = "1s", observe = [1])`:                     "cannot be observed",
		`workload.http("http://x/", clients = 1, duration = "1s", profile_hz = 99)`:                   "workload.http: profile_hz = 99 without profile = True",
		`workload.http("http://x/", clients = 1, duration = "1s", profile = True, profile_hz = 9999)`: "workload.http: profile_hz must be in 1..5000, got 9999",
		`workload.exec("true", profile_hz = -1)`:                                                      "workload.exec: profile_hz = -1 without profile",
		`workload.sql(1, query = "select 1", clients = 1, duration = "1s")`:                           "workload.sql: db must be",
		`workload.sql("postgres://x/", clients = 1, duration = "1s")`:                                 "query",
		`workload.http("http://x/", rate = 1e9, duration = "1s")`:                                     "rate must be at most",
		`workload.http("http://x/", clients = 1, duration = "1h", window = "1ms")`:                    "window:",
		`workload.exec("true", runs = 0)`:                                                             "runs must be > 0",
		`workload.http("http://x/", clients = 1, duration = "1s", tick = "1ms")`:                      "tick applies to an open loop",
		`workload.http("http://x/", rate = 5, duration = "1s", tick = "2s")`:                          "tick must be at most 1s",
		`workload.http("http://x/", rate = 5, duration = "1s", tick = "soon")`:                        `for parameter "tick": malformed tick "soon" (want "auto", 0`,
		`workload.http("http://x/", clients = 1, duration = "1s", tick = "auto")`:                     "tick applies to an open loop",
		`workload.exec(["/no/such/binary"])`:                                                          "workload.exec: cmd",
	}
	for src, want := range cases {
		_, err := execStar(t, context.Background(), src, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want error containing %q", src, err, want)
		}
	}
}

func TestInterruptKeepsMeasurement(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, loop := range []string{"rate = 200", "clients = 2"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(700*time.Millisecond, cancel)
		start := time.Now()
		g, err := execStar(t, ctx, `r = workload.http(url, `+loop+`, duration = "30s", warmup = "200ms")`,
			starlark.StringDict{"url": str(srv.URL)})
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: Ctrl-C took %s to end the run", loop, el)
		}
		r := g["r"].(*Run)
		if !r.Interrupted() || r.d.Count == 0 || r.d.Measured > time.Second || sumErrors(r.d.Errors) != 0 {
			t.Errorf("%s: interrupted=%v count=%d duration=%v errors=%v", loop, r.Interrupted(), r.d.Count, r.d.Measured, r.d.Errors)
		}
	}
}

func TestGenerators(t *testing.T) {
	var mu sync.Mutex
	paths := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.RequestURI()]++
		mu.Unlock()
	}))
	defer srv.Close()
	g := mustExec(t, `
def gen(i):
    return "?i=" + str(i % 3)
r = workload.http(url + "/p", request = gen, clients = 2, duration = "300ms", warmup = 0)
assert.true(r.count > 3)
assert.true(not any(["Starlark" in w for w in r.warnings]))  # a cheap generator: no warning
def slow(i):
    s = 0
    for k in range(20000):
        s += k
    return "?i=" + str(i % 3)
s = workload.http(url + "/p", request = slow, clients = 2, duration = "300ms", warmup = 0)
assert.true(any(["Starlark request generators were busy" in w for w in s.warnings]))
f = workload.http(url, request = gofn, clients = 2, duration = "300ms", warmup = 0)
assert.true(not any(["Starlark" in w for w in f.warnings]))
`, starlark.StringDict{"url": str(srv.URL), "gofn": goFunc{func(i int64) string { return fmt.Sprintf("%s/g%d", srvURL(srv), i%2) }}})
	_ = g
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/p?i=0", "/p?i=1", "/p?i=2", "/g0", "/g1"} {
		if paths[p] == 0 {
			t.Errorf("no request for %s: %v", p, paths)
		}
	}
}

func srvURL(s *httptest.Server) string { return s.URL }

// goFunc stands in for a gocode function.
type goFunc struct{ f any }

func (g goFunc) Func() any             { return g.f }
func (g goFunc) String() string        { return "gofunc" }
func (g goFunc) Type() string          { return "gofunc" }
func (g goFunc) Freeze()               {}
func (g goFunc) Truth() starlark.Bool  { return true }
func (g goFunc) Hash() (uint32, error) { return 0, nil }
func (g goFunc) Name() string          { return "gofunc" }
func (g goFunc) CallInternal(*starlark.Thread, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return starlark.None, nil
}
