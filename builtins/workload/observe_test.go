package workload

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// fakeObserver reports a fixed figure and the request count it was given.
type fakeObserver struct{ started bool }

func (f *fakeObserver) String() string        { return "fake" }
func (f *fakeObserver) Type() string          { return "fake" }
func (f *fakeObserver) Freeze()               {}
func (f *fakeObserver) Truth() starlark.Bool  { return true }
func (f *fakeObserver) Hash() (uint32, error) { return 0, nil }
func (f *fakeObserver) StartObserving(context.Context) (func(int64) (map[string]float64, error), error) {
	f.started = true
	return func(n int64) (map[string]float64, error) {
		return map[string]float64{"db_cpu_us_per_req": 1.5, "seen": float64(n)}, nil
	}, nil
}

func TestObserversBecomeAttributes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	obs := &fakeObserver{}
	g := mustExec(t, `
r = workload.http(url, clients = 2, duration = "500ms", warmup = "100ms", observe = [obs])
assert.eq(r.db_cpu_us_per_req, 1.5)
assert.true(r.seen > 0)
`, starlark.StringDict{"url": str(srv.URL), "obs": obs})
	data, err := codec.Encode(g["r"])
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := back.(*Run).Attr("db_cpu_us_per_req"); v != starlark.Float(1.5) {
		t.Errorf("observer figure not stored: %v", v)
	}
}

func TestProgressPlainLines(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var buf bytes.Buffer
	th := startest.Thread(t, startest.Options{Stderr: &buf})
	start := time.Now()
	_, err := starlark.ExecFile(th, "p.star", `r = workload.http(url, clients = 1, duration = "2s", warmup = "300ms", label = "demo run")`,
		starlark.StringDict{"workload": testModule().Globals["workload"], "url": str(srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	secs := int(time.Since(start).Seconds())
	if len(lines) < 2 || len(lines) > secs+1 || strings.Contains(buf.String(), "\r") {
		t.Fatalf("want about one plain line per second over %d s, got %q", secs, buf.String())
	}
	if !strings.HasPrefix(lines[len(lines)-1], "demo run") || !strings.Contains(lines[len(lines)-1], "req/s") {
		t.Errorf("progress line: %q", lines[len(lines)-1])
	}
}

// slowObserver takes its first snapshot only after delay, as a cluster's
// observer does after connecting on a loaded box.
type slowObserver struct {
	hitObserver
	delay time.Duration
}

func (s slowObserver) StartObserving(ctx context.Context) (func(int64) (map[string]float64, error), error) {
	time.Sleep(s.delay)
	return s.hitObserver.StartObserving(ctx)
}

// An observer whose window opens late divides its figures by the requests
// counted after its opening: the server's own count of the requests it saw
// in that window (the oracle) is one per request. Dividing by all the
// run's requests gave 0.6 here, and a cluster that took a second to open
// its window in a 1 s run recorded 0 buffers per request.
func TestLateObserverDividesByItsOwnWindow(t *testing.T) {
	url, hits := countingServer(t)
	g := mustExec(t, `r = workload.http(url, clients = 2, duration = "1s", warmup = "100ms", observe = [obs])`,
		starlark.StringDict{"url": str(url), "obs": slowObserver{hitObserver{hits}, 400 * time.Millisecond}})
	r := g["r"].(*Run)
	if per := r.d.Observed["server_hits_per_req"]; per < 0.9 || per > 1.1 {
		t.Errorf("server hits per request %.3f over the observer's window (%.0f hits, %d requests in the run), want 1",
			per, r.d.Observed["server_hits"], r.d.Count)
	}
	if !slices.ContainsFunc(r.d.Warnings, func(w string) bool { return strings.Contains(w, "observer hits: its window opened late") }) {
		t.Errorf("no warning of the late window: %q", r.d.Warnings)
	}
}

// preparedObserver does its slow part in PrepareObserving, as a cluster's
// observer connects there: during the warm-up, before the window.
type preparedObserver struct {
	hitObserver
	delay     time.Duration
	cancelled *atomic.Bool
}

func (p preparedObserver) PrepareObserving(ctx context.Context) (func() (func(int64) (map[string]float64, error), error), func(), error) {
	time.Sleep(p.delay)
	return func() (func(int64) (map[string]float64, error), error) { return p.hitObserver.StartObserving(ctx) },
		func() { p.cancelled.Store(true) }, nil
}

// An observer prepared during the warm-up opens its window on time: it
// sees every request of the run (the server's count), with no warning, and
// what it prepared is its window's, not cancelled.
func TestPreparedObserverOpensOnTime(t *testing.T) {
	url, hits := countingServer(t)
	var cancelled atomic.Bool
	g := mustExec(t, `r = workload.http(url, clients = 2, duration = "1s", warmup = "600ms", observe = [obs])`,
		starlark.StringDict{"url": str(url), "obs": preparedObserver{hitObserver{hits}, 400 * time.Millisecond, &cancelled}})
	r := g["r"].(*Run)
	if seen := r.d.Observed["server_hits"] / float64(r.d.Count); seen < 0.95 || seen > 1.05 {
		t.Errorf("the observer saw %.0f requests of the run's %d: its window did not open with the run's", r.d.Observed["server_hits"], r.d.Count)
	}
	if slices.ContainsFunc(r.d.Warnings, func(w string) bool { return strings.Contains(w, "opened late") }) || cancelled.Load() {
		t.Errorf("warnings %q, cancelled %v", r.d.Warnings, cancelled.Load())
	}
	// Interrupted in the warm-up, the window never opens: what was
	// prepared is released.
	cancelled.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	_, _ = execStar(t, ctx, `workload.http(url, clients = 2, duration = "1s", warmup = "3s", observe = [obs])`,
		starlark.StringDict{"url": str(url), "obs": preparedObserver{hitObserver{hits}, 0, &cancelled}})
	if !cancelled.Load() {
		t.Errorf("a window that never opened kept what its observer prepared")
	}
}

// Without a warmup, the window opens with the run's first request: the
// observers and guards open before the load starts, however long they take,
// and the window's duration starts when they are open. Before, the load
// started while they opened: a slow observer saw the run's first 0.3 s go
// by (its window "opened late"), and a PostgreSQL guard's log offset came
// after the ERROR lines of the first requests it was meant to count (3
// short of 210 in a fresh clone's race pass).
func TestObserversOpenBeforeALoadWithoutWarmup(t *testing.T) {
	url, hits := countingServer(t)
	start := time.Now()
	g := mustExec(t, `r = workload.http(url, clients = 2, duration = "1s", warmup = "0s", observe = [obs])`,
		starlark.StringDict{"url": str(url), "obs": slowObserver{hitObserver{hits}, 300 * time.Millisecond}})
	r := g["r"].(*Run)
	if seen := r.d.Observed["server_hits"] / float64(r.d.Count); seen < 0.98 || seen > 1.02 {
		t.Errorf("the observer saw %.0f of the run's %d requests", r.d.Observed["server_hits"], r.d.Count)
	}
	if slices.ContainsFunc(r.d.Warnings, func(w string) bool { return strings.Contains(w, "opened late") }) {
		t.Errorf("warnings %q", r.d.Warnings)
	}
	if hits.Load() != r.d.Count+sumErrors(r.d.Errors) {
		t.Errorf("the server saw %d requests, the run counts %d and %v: some were sent outside the window", hits.Load(), r.d.Count, r.d.Errors)
	}
	if el := time.Since(start); el < 1300*time.Millisecond {
		t.Errorf("the run took %s: its 1 s window was not all load after the observer's 300 ms", el)
	}
}

// An observer whose first snapshot comes after the whole window (on a
// loaded box: a container's engine inspect, then a snapshot over a
// CPU-quota'd server, longer than a 1 s window) saw none of the run's
// requests. Its per-request figure is left out of the run, and whatever
// reads it (compare, plot, verdict: starval.Metric; run.NAME) is told why:
// which observer, how late, after how many requests. Before, the figure
// vanished and compare said only "run has no metric".
func TestObserverLateForTheWholeWindowIsNamed(t *testing.T) {
	url, hits := countingServer(t)
	o := startest.Options{Modules: []runtime.Module{testModule(), metric.Module()}, Globals: starlark.StringDict{
		"url": str(url), "obs": slowObserver{hitObserver{hits}, 2 * time.Second}}}
	g := startest.MustExec(t, o, `
r = workload.http(url, clients = 2, duration = "300ms", warmup = "100ms", observe = [obs])
late = r.late_observers
assert.eq([(l.observer, l.left_out, l.before, l.requests) for l in late], [("hits", ["server_hits_per_req"], r.count, r.count)])
assert.true(late[0].late_s >= 2, late[0].late_s)
assert.true("server_hits" in dir(r))
assert.true("server_hits_per_req" not in dir(r))
assert.fails(lambda: r.server_hits_per_req, 'run has no .server_hits_per_req: the observer "hits" took its first snapshot')
assert.fails(lambda: compare([r, r], [r, r], metric = "server_hits_per_req"),
             'compare: A run 1: run has no metric "server_hits_per_req": the observer "hits" took its first snapshot [0-9.]+ s after the window opened \\(after all [0-9]+ requests\\)')
`)
	r := g["r"].(*Run)
	if r.d.Count == 0 {
		t.Fatalf("the run counted no request: %v", r)
	}
	why := regexp.MustCompile(fmt.Sprintf(`has no metric "server_hits_per_req": the observer "hits" took its first snapshot (\d+\.\d) s after the window opened \(after all %d requests\)`, r.d.Count))
	th := startest.Thread(t, o)
	_, err := starval.Metric(th, r, starlark.String("server_hits_per_req"))
	m := why.FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		t.Fatalf("the error does not say why: %v", err)
	}
	if late, _ := strconv.ParseFloat(m[1], 64); late < 2 {
		t.Errorf("the observer slept 2 s before its first snapshot; the run says it was %s s late", m[1])
	}
	// The record keeps it: a cached run says the same.
	_, err = starval.Metric(th, stored(t, r), starlark.String("server_hits_per_req"))
	if !why.MatchString(fmt.Sprint(err)) {
		t.Errorf("the stored run forgot why: %v", err)
	}
}

// namedHits counts the server's hits under a name of its own, after delay.
type namedHits struct {
	name  string
	hits  *atomic.Int64
	delay time.Duration
}

func (h namedHits) String() string        { return h.name }
func (h namedHits) Type() string          { return h.name }
func (h namedHits) Freeze()               {}
func (h namedHits) Truth() starlark.Bool  { return true }
func (h namedHits) Hash() (uint32, error) { return 0, nil }
func (h namedHits) StartObserving(context.Context) (func(int64) (map[string]float64, error), error) {
	time.Sleep(h.delay)
	before := h.hits.Load()
	return func(n int64) (map[string]float64, error) {
		hits := float64(h.hits.Load() - before)
		figs := map[string]float64{h.name: hits}
		if n > 0 {
			figs[h.name+"_per_req"] = hits / float64(n)
		}
		return figs, nil
	}, nil
}

// Observers take their first snapshots side by side: one slow to take its
// own (2 s, twice the window) does not make the next one late. Before, the
// second waited for the first and saw none of the window's requests; now
// it sees them all, one server hit per request (the server's count is the
// oracle), and only the slow one is named late.
func TestASlowObserverDoesNotMakeTheOthersLate(t *testing.T) {
	url, hits := countingServer(t)
	g := mustExec(t, `r = workload.http(url, clients = 2, duration = "1s", warmup = "100ms", observe = [slow, fast])`,
		starlark.StringDict{"url": str(url), "slow": namedHits{"slow", hits, 2 * time.Second}, "fast": namedHits{"fast", hits, 0}})
	r := g["r"].(*Run)
	per, ok := r.d.Observed["fast_per_req"]
	if !ok || per < 0.9 || per > 1.1 {
		t.Errorf("the fast observer saw %.0f server hits per request (%v): %q", per, ok, r.d.Warnings)
	}
	if len(r.d.LateObservers) != 1 || r.d.LateObservers[0].Observer != "slow" {
		t.Errorf("late observers %+v, want the slow one alone", r.d.LateObservers)
	}
}
