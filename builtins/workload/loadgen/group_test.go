package loadgen_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
)

// arrivals is the oracle of the concurrent tests: a net/http server that
// notes, by path, how many requests came and when the first and the last
// arrived.
type arrivalLog struct {
	mu          sync.Mutex
	n           map[string]int64
	first, last map[string]time.Time
}

func newArrivalLog() *arrivalLog {
	return &arrivalLog{n: map[string]int64{}, first: map[string]time.Time{}, last: map[string]time.Time{}}
}

func (a *arrivalLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	a.mu.Lock()
	p := r.URL.Path
	a.n[p]++
	if a.first[p].IsZero() {
		a.first[p] = now
	}
	a.last[p] = now
	a.mu.Unlock()
	if p == "/slow" {
		time.Sleep(2 * time.Millisecond)
	}
}

// TestConcurrentScenariosShareOneWindow: a closed loop, an open loop and
// a mix start at one instant and share one measurement window: the server
// sees each scenario's first and last request within 10 ms of the
// others', every request counted in its scenario (and a mix's in its
// tag), and every result has the same measured window.
func TestConcurrentScenariosShareOneWindow(t *testing.T) {
	timing.Only(t, "the scenarios' windows are compared to 10 ms")
	// The windows' edges are the box's scheduling too: at load >= cores
	// (tests elsewhere on a shared box) a late one is tried again, up to 3
	// times; the counts are checked every time.
	for attempt := 1; ; attempt++ {
		late := concurrentWindows(t)
		load, _ := hostinfo.LoadAvg()
		if len(late) == 0 || attempt == 3 || load[0] < float64(goruntime.NumCPU()) {
			for _, e := range late {
				t.Error(e)
			}
			return
		}
		t.Logf("attempt %d at load %.1f on %d cores: %q; again", attempt, load[0], goruntime.NumCPU(), late)
	}
}

// concurrentWindows runs the three scenarios once, checks their counts,
// and returns how their first and last requests missed each other's by
// more than 10 ms.
func concurrentWindows(t *testing.T) (late []string) {
	log := newArrivalLog()
	srv := httptest.NewServer(log)
	defer srv.Close()
	target := func(spec h1wire.HTTPSpec) loadgen.Target {
		spec.URL = srv.URL + spec.URL
		tgt, err := h1wire.NewHTTPTarget(spec)
		if err != nil {
			t.Fatal(err)
		}
		return tgt
	}
	common := loadgen.Spec{Duration: 800 * time.Millisecond, Window: 200 * time.Millisecond, Timeout: time.Second}
	closed, open, mixed := common, common, common
	closed.Clients, open.Rate, open.MaxInflight, mixed.Rate, mixed.MaxInflight = 2, 500, 16, 300, 16
	res := loadgen.RunConcurrent(context.Background(), nil, []loadgen.Scenario{
		{Spec: closed, Target: target(h1wire.HTTPSpec{URL: "/slow"})},
		{Spec: open, Target: target(h1wire.HTTPSpec{URL: "/b"})},
		{Spec: mixed, Target: target(h1wire.HTTPSpec{URL: "/", Requests: []h1wire.HTTPRequest{{URL: "/m1", Tag: "one"}, {URL: "/m2", Tag: "two"}}})},
	}, time.Time{})
	log.mu.Lock()
	defer log.mu.Unlock()
	t.Logf("served %v", log.n)
	if res[0].Intended != log.n["/slow"] || res[1].Intended != log.n["/b"] || res[2].Intended != log.n["/m1"]+log.n["/m2"] {
		t.Errorf("scenarios intended %d, %d, %d; the server saw %v", res[0].Intended, res[1].Intended, res[2].Intended, log.n)
	}
	if res[2].Tags["one"].Intended != log.n["/m1"] || res[2].Tags["two"].Intended != log.n["/m2"] {
		t.Errorf("the mix's tags hold %d and %d, the server saw %v", res[2].Tags["one"].Intended, res[2].Tags["two"].Intended, log.n)
	}
	for i, r := range res {
		if r.Measured != res[0].Measured {
			t.Errorf("scenario %d measured %s, scenario 0 %s", i, r.Measured, res[0].Measured)
		}
		checkTagAccounts(t, r)
	}
	paths := []string{"/slow", "/b", "/m1"}
	for _, p := range paths[1:] {
		if d := log.first[p].Sub(log.first[paths[0]]).Abs(); d > 10*time.Millisecond {
			late = append(late, fmt.Sprintf("%s began %s apart from %s", p, d, paths[0]))
		}
		if d := log.last[p].Sub(log.last[paths[0]]).Abs(); d > 10*time.Millisecond {
			late = append(late, fmt.Sprintf("%s ended %s apart from %s", p, d, paths[0]))
		}
	}
	return late
}

// TestConcurrentInterruptKeepsEveryScenario: Ctrl-C stops every scenario
// at once; each is interrupted, keeps what it measured, and its counts
// still add up, including the requests Ctrl-C left undecided.
func TestConcurrentInterruptKeepsEveryScenario(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	tgt := func() loadgen.Target {
		t, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: slow.URL + "/", Requests: []h1wire.HTTPRequest{{URL: "/a", Tag: "a"}, {URL: "/b", Tag: "b"}}})
		if err != nil {
			panic(err)
		}
		return t
	}
	common := loadgen.Spec{Duration: 10 * time.Second, Warmup: 100 * time.Millisecond, Window: time.Second, Timeout: time.Second}
	a, b := common, common
	a.Clients, b.Rate, b.MaxInflight = 3, 100, 4
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(600*time.Millisecond, cancel)
	start := time.Now()
	res := loadgen.RunConcurrent(ctx, nil, []loadgen.Scenario{{Spec: a, Target: tgt()}, {Spec: b, Target: tgt()}}, time.Time{})
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("the interrupted group took %s to return", el)
	}
	for i, r := range res {
		if !r.Interrupted || r.Count == 0 || r.Undecided == 0 {
			t.Errorf("scenario %d: interrupted %v, count %d, undecided %d: want its figures kept and the cut short undecided", i, r.Interrupted, r.Count, r.Undecided)
		}
		if got := r.Count + loadgen.SumErrors(r.Errors) + r.Dropped + r.Undecided; got != r.Intended {
			t.Errorf("scenario %d: %d accounted for, %d intended", i, got, r.Intended)
		}
		checkTagAccounts(t, r)
	}
}

// TestConcurrentStartsAtTheGivenInstant: a group given its start instant
// (a fleet's) sends nothing before it.
func TestConcurrentStartsAtTheGivenInstant(t *testing.T) {
	log := newArrivalLog()
	srv := httptest.NewServer(log)
	defer srv.Close()
	tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: srv.URL + "/x"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(300 * time.Millisecond)
	res := loadgen.RunConcurrent(context.Background(), nil, []loadgen.Scenario{{Spec: loadgen.Spec{Clients: 1, Duration: 200 * time.Millisecond, Window: time.Second, Timeout: time.Second}, Target: tgt}}, at)
	log.mu.Lock()
	defer log.mu.Unlock()
	if first := log.first["/x"]; first.Before(at) || res[0].Count == 0 {
		t.Errorf("first request at %s, %s before the start instant (count %d)", first.Format(time.StampMicro), at.Sub(first), res[0].Count)
	}
}
