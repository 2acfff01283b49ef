package workload

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// accounted is every outcome a run counted; it must equal intended.
func accounted(r *Run) int64 {
	return r.d.Count + sumErrors(r.d.Errors) + r.d.Dropped + r.d.Undecided
}

// checkConservation: every request of the window has exactly one outcome,
// and the headline histogram holds every decided one.
func checkConservation(t *testing.T, name string, r *Run, wantIntended int64) {
	t.Helper()
	t.Logf("%s: intended %d = count %d + errors %v + dropped %d + undecided %d; hist %d, ok %d, p99 %.0f ms, ok_p99 %.0f ms",
		name, r.d.Intended, r.d.Count, r.d.Errors, r.d.Dropped, r.d.Undecided, r.d.Hist.TotalCount(), r.okHist().TotalCount(),
		quantileMs(r.d.Hist, 99), quantileMs(r.okHist(), 99))
	if got := accounted(r); got != r.d.Intended {
		t.Errorf("%s: %d requests accounted for, %d intended", name, got, r.d.Intended)
	}
	if wantIntended >= 0 && r.d.Intended != wantIntended {
		t.Errorf("%s: intended %d, want %d", name, r.d.Intended, wantIntended)
	}
	if decided := r.d.Intended - r.d.Undecided; r.d.Hist.TotalCount() != decided {
		t.Errorf("%s: the headline histogram holds %d requests, %d were decided", name, r.d.Hist.TotalCount(), decided)
	}
	if r.okHist().TotalCount() != r.d.Count {
		t.Errorf("%s: ok_hist holds %d, count is %d", name, r.okHist().TotalCount(), r.d.Count)
	}
	// The record says so: intended in the run's table, the convention in a warning.
	md := r.Markdown()
	if !strings.Contains(md, "| intended |") || r.d.Undecided > 0 && !strings.Contains(md, "| undecided |") {
		t.Errorf("%s: the run's table lacks intended or undecided:\n%s", name, md)
	}
	if sumErrors(r.d.Errors)+r.d.Dropped > 0 && !strings.Contains(md, "as lower bounds") {
		t.Errorf("%s: failures entered the percentiles without a warning:\n%s", name, md)
	}
}

// stallAfter answers at once until `after` past its first request, then
// never (until the client gives up).
func stallAfter(after time.Duration) *httptest.Server {
	var once sync.Once
	var first time.Time // set once, before any handler reads it
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { first = time.Now() })
		if time.Since(first) > after {
			<-r.Context().Done()
		}
	}))
}

// TestOpenLoopConservation is issue 13's account: rate 100 for 2 s against
// a target that stalls after 1 s (timeout 500 ms, 4 in flight) left 44 of
// 200 requests in no counter. Every fault now adds up to intended.
func TestOpenLoopConservation(t *testing.T) {
	t.Parallel()
	stall := stallAfter(time.Second)
	defer stall.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond) // 4 in flight: at most 80 req/s
	}))
	defer slow.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()
	for _, tc := range []struct {
		name, url, args string
		intended        int64
		dropped         bool // the fault must show as dropped requests
	}{
		{"stall", stall.URL, `rate = 100, duration = "2s", timeout = "500ms", max_inflight = 4, warmup = 0`, 200, true},
		{"overload", slow.URL, `rate = 200, duration = "2s", timeout = "200ms", max_inflight = 4, warmup = 0`, 400, true},
		{"refused", refused, `rate = 100, duration = "1s", timeout = "200ms", warmup = 0`, 100, false},
		{"poisson stall", stall.URL, `rate = 100, arrival = "poisson", duration = "1s", warmup = "500ms", timeout = "300ms", max_inflight = 2`, -1, true},
	} {
		g := mustExec(t, fmt.Sprintf(`r = workload.http(url, %s)`, tc.args), starlark.StringDict{"url": str(tc.url)})
		r := g["r"].(*Run)
		checkConservation(t, tc.name, r, tc.intended)
		if tc.dropped && r.d.Dropped == 0 {
			t.Errorf("%s: nothing dropped", tc.name)
		}
		if tc.dropped && quantileMs(r.d.Hist, 99) < 200 {
			t.Errorf("%s: p99 %.0f ms leaves out the requests that waited a timeout or more", tc.name, quantileMs(r.d.Hist, 99))
		}
	}
}

// TestInterruptConservation: Ctrl-C mid-run; what was due before it and got
// no outcome is undecided, so the account still adds up, in every loop.
func TestInterruptConservation(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	for _, loop := range []string{"rate = 50, max_inflight = 32", "clients = 4"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(1100*time.Millisecond, cancel)
		g, err := execStar(t, ctx, `r = workload.http(url, `+loop+`, duration = "10s", warmup = "200ms", timeout = "1s")`,
			starlark.StringDict{"url": str(slow.URL)})
		if err != nil {
			t.Fatal(err)
		}
		r := g["r"].(*Run)
		if !r.d.Interrupted || r.d.Undecided == 0 {
			t.Errorf("%s: interrupted %v, undecided %d", loop, r.d.Interrupted, r.d.Undecided)
		}
		checkConservation(t, loop, r, -1)
	}
}

// TestSQLOpenLoopConservation: the SQL open loop overloaded (two in-flight
// slots for 100 statements a second of 50 ms each) adds up too.
func TestSQLOpenLoopConservation(t *testing.T) {
	dsn := startPostgres(t)
	g := mustExec(t, `r = workload.sql(dsn, query = "select pg_sleep(0.05)", rate = 100, max_inflight = 2, duration = "1s", warmup = 0, timeout = "200ms")`,
		starlark.StringDict{"dsn": str(dsn)})
	r := g["r"].(*Run)
	checkConservation(t, "sql overload", r, 100)
	if r.d.Dropped == 0 {
		t.Error("sql overload: nothing dropped")
	}
}
