package workload

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// stallServer answers at once, except that for one second, starting at
// `after` past its first request, every request waits for the second to end.
func stallServer(after time.Duration) *httptest.Server {
	var once sync.Once
	var from, until time.Time
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		once.Do(func() { from = now.Add(after); until = from.Add(time.Second) })
		if !now.Before(from) && now.Before(until) {
			time.Sleep(time.Until(until))
		}
		io.WriteString(w, "ok")
	}))
}

// The coordinated-omission test of issue 3: a 1 s stall at 1,000 req/s for
// 10 s puts ~10% of latencies between 0 and 1 s; a closed loop hides it.
func TestCoordinatedOmission(t *testing.T) {
	if testing.Short() {
		t.Skip("12 s; skipped with -short")
	}
	timing.Only(t, "the race detector slows the generator several-fold, which is what this test would then measure")
	open := stallServer(3 * time.Second)
	defer open.Close()
	closed := stallServer(500 * time.Millisecond)
	defer closed.Close()
	g := mustExec(t, `
o = workload.http(open_url, rate = 1000, duration = "10s", warmup = 0)
c = workload.http(closed_url, clients = 16, duration = "2s", warmup = 0)
`, starlark.StringDict{"open_url": str(open.URL), "closed_url": str(closed.URL)})
	o, c := g["o"].(*Run), g["c"].(*Run)
	p99, p95 := quantileMs(o.d.Hist, 99), quantileMs(o.d.Hist, 95)
	t.Logf("open loop: p95 %.0f ms, p99 %.0f ms, count %d; closed loop: p95 %.1f ms p99 %.1f ms, count %d, max %.0f ms",
		p95, p99, o.d.Count, quantileMs(c.d.Hist, 95), quantileMs(c.d.Hist, 99), c.d.Count, usToMs(c.d.Hist.Max()))
	t.Logf("open loop: service p95 %.0f ms, lag p95 %.1f ms p99 %.1f ms max %.1f ms, late %d, warnings %v",
		quantileMs(o.d.Service, 95), quantileMs(o.lagHist(), 95), quantileMs(o.lagHist(), 99), usToMs(o.lagHist().Max()), o.d.Late, o.d.Warnings)
	for _, w := range o.d.Windows {
		t.Logf("window %.0f: count %d p50 %.1f p99 %.1f", w.Start, w.Count, w.P50, w.P99)
	}
	if p99 < 850 {
		t.Errorf("open loop p99 = %.0f ms, want >= 850 (coordinated omission not corrected)", p99)
	}
	if p95 < 400 || p95 > 600 {
		t.Errorf("open loop p95 = %.0f ms, want 400..600", p95)
	}
	if o.d.Dropped != 0 || sumErrors(o.d.Errors) != 0 {
		t.Errorf("open loop dropped %d, errors %v", o.d.Dropped, o.d.Errors)
	}
	// The closed loop saw the stall (its max is ~1 s) but hides it: only the
	// 16 requests in flight waited, so p99 stays far below.
	if usToMs(c.d.Hist.Max()) < 900 {
		t.Errorf("closed loop max = %.0f ms: the stall did not happen", usToMs(c.d.Hist.Max()))
	}
	if cp99 := quantileMs(c.d.Hist, 99); cp99 > p99/4 {
		t.Errorf("closed loop p99 = %.0f ms, want far below the open loop's %.0f ms", cp99, p99)
	}
}

// Open-loop rate accuracy of issue 3: within 1% at 2,000 req/s.
func TestOpenLoopRateAccuracy(t *testing.T) {
	timing.Only(t, "the race detector slows the generator several-fold, which is what this test would then measure")
	var mu sync.Mutex
	var stamps []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stamps = append(stamps, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	for _, arrival := range []string{"constant", "poisson"} {
		var r *Run
		// A neighbour's burst on these shared cores can hold the box for
		// a whole run (a fresh machine's CI: dispatch lag p50 0.52 ms,
		// p99 131 ms, 764 requests late, where runs before and after saw
		// p50 0.10-0.13 ms): a lag over the bound is measured once more.
		// Noise only adds lag: a generator without its waker (~0.55 ms)
		// fails both.
		for attempt := 1; ; attempt++ {
			mu.Lock()
			stamps = nil
			mu.Unlock()
			g := mustExec(t, `r = workload.http(url, rate = 2000, arrival = arrival, duration = "3s", warmup = "500ms")`,
				starlark.StringDict{"url": str(srv.URL), "arrival": str(arrival)})
			r = g["r"].(*Run)
			lag := quantileMs(r.lagHist(), 50)
			if lag <= 0.4 || attempt == 2 {
				break
			}
			t.Logf("%s: dispatch lag p50 %.2f ms (p99 %.2f ms, %d late): measured again", arrival, lag, quantileMs(r.lagHist(), 99), r.d.Late)
		}
		want := 2000.0
		if arrival == "poisson" {
			want = float64(r.d.Count) / r.d.Measured.Seconds() // the seeded draw, checked below against the server
		}
		if math.Abs(r.RPS()-2000)/2000 > 0.01 && arrival == "constant" {
			t.Errorf("%s: rps = %.1f, want 2000 ± 1%%", arrival, r.RPS())
		}
		// What the server saw over the measurement window must match the
		// rate too: requests really left on schedule.
		mu.Lock()
		seen := countBetween(stamps, stamps[0].Add(500*time.Millisecond), stamps[0].Add(3500*time.Millisecond))
		mu.Unlock()
		want *= 3
		tol := 0.01
		if arrival == "poisson" {
			tol = 0.1 // the seeded draw's own rate, then the same timing check
		}
		if math.Abs(float64(seen)-want)/want > tol {
			t.Errorf("%s: server saw %d req in the 3 s window, want %.0f ± %.0f%%", arrival, seen, want, tol*100)
		}
		// The waker: without it Go's timers wake in whole milliseconds
		// when the process is idle (dispatch lag p50 ~0.55 ms here).
		if lag := quantileMs(r.lagHist(), 50); lag > 0.4 {
			t.Errorf("%s: dispatch lag p50 %.2f ms, want < 0.4", arrival, lag)
		}
		t.Logf("%s: rps %.1f, count %d, server %d, lag p50 %.2f p99 %.2f max %.1f ms, late %d, workers %d", arrival, r.RPS(), r.d.Count, seen,
			quantileMs(r.lagHist(), 50), quantileMs(r.lagHist(), 99), usToMs(r.lagHist().Max()), r.d.Late, len(r.d.Windows))
		if r.d.Dropped != 0 || sumErrors(r.d.Errors) != 0 {
			t.Errorf("%s: dropped %d, errors %v", arrival, r.d.Dropped, r.d.Errors)
		}
	}
}

func countBetween(ts []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}
