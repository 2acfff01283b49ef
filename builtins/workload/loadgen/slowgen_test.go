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

// TestSlowGeneratorDelaysSendsNotResponses: users whose requests a
// generator makes that spins a known time G per call, one call at a time
// (as a Starlark generator's lock makes it), against a server that
// answers at once. The truth: the generator makes at most 1/G requests a
// second, so N users cycle in no less than N·G, of which think takes Z and
// the server next to nothing: the rest is the users waiting for the
// generator, their send delay (Result.Lag), not the target's latency. The
// run must say so: latency well under G (the generator's own time is not
// the server's), sends late by most of the wait. The same users without a
// generator wait far less. Both the event loop (plain HTTP) and the
// goroutine per user (https) are checked.
func TestSlowGeneratorDelaysSendsNotResponses(t *testing.T) {
	timing.Only(t, "users' send delay behind a slow generator")
	const (
		users = 20
		think = 5 * time.Millisecond
		g     = 2 * time.Millisecond
	)
	for _, tls := range []bool{false, true} {
		name := "event loop"
		if tls {
			name = "goroutine per user"
		}
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			if tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			var mu sync.Mutex
			spin := func(int64) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				for t0 := time.Now(); time.Since(t0) < g; {
				}
				return "/slow", nil
			}
			run := func(gen func(int64) (string, error)) *loadgen.Result {
				tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: srv.URL + "/", Insecure: tls, Gen: gen})
				if err != nil {
					t.Fatal(err)
				}
				spec := loadgen.Spec{Clients: users, Think: think, Warmup: 200 * time.Millisecond,
					Duration: 600 * time.Millisecond, Window: 600 * time.Millisecond, Timeout: 5 * time.Second}
				res := loadgen.Run(context.Background(), spec, tgt)
				if loadgen.SumErrors(res.Errors) != 0 || res.Count == 0 {
					t.Fatalf("count %d, errors %v", res.Count, res.Errors)
				}
				return res
			}
			// What the box decides (a busy one delays the server in this
			// process as well) is tried again, as the response-time law's
			// test does; the generator's rate bound is the oracle's own.
			for attempt := 1; ; attempt++ {
				slow, free := run(spin), run(nil)
				x := float64(slow.Intended) / slow.Measured.Seconds()
				if x > 1.05/g.Seconds() {
					t.Fatalf("%.0f req/s from a generator that makes at most %.0f: the oracle does not hold", x, 1/g.Seconds())
				}
				errs := slowGenErrors(t, slow, free, users, think, g, x)
				load, _ := hostinfo.LoadAvg()
				if len(errs) == 0 || attempt == 3 || load[0] < float64(goruntime.NumCPU()) {
					for _, e := range errs {
						t.Error(e)
					}
					return
				}
				t.Logf("attempt %d at load %.1f on %d cores: %q; again", attempt, load[0], goruntime.NumCPU(), errs)
			}
		})
	}
}

// slowGenErrors checks a slow generator's run (and the same users' without
// it) against what the generator's known cost implies.
func slowGenErrors(t *testing.T, slow, free *loadgen.Result, users int, think, g time.Duration, x float64) (errs []string) {
	t.Helper()
	cycle := float64(users) / x * 1e3 // ms, by the law N = X (R + Z)
	wait := cycle - think.Seconds()*1e3 - slow.Hist.Mean()/1e3
	lat, lag, meanLag := loadgen.QuantileMs(slow.Hist, 50), loadgen.QuantileMs(slow.Lag, 50), slow.Lag.Mean()/1e3
	t.Logf("slow generator (%s a call): %.0f req/s (it can make %.0f), cycle %.2f ms: latency p50 %.3f ms mean %.3f, send delay p50 %.2f ms mean %.2f, late %d of %d; without a generator: latency p50 %.3f ms, send delay p50 %.3f ms",
		g, x, 1/g.Seconds(), cycle, lat, slow.Hist.Mean()/1e3, lag, meanLag, slow.Late, slow.Intended, loadgen.QuantileMs(free.Hist, 50), loadgen.QuantileMs(free.Lag, 50))
	if lat > g.Seconds()*1e3/2 {
		errs = append(errs, fmt.Sprintf("latency p50 %.3f ms from a server that answers at once: the generator's %s a call is in it", lat, g))
	}
	if meanLag < wait/2 {
		errs = append(errs, fmt.Sprintf("the users waited %.2f ms a cycle for the generator, their sends show %.2f ms of it", wait, meanLag))
	}
	if lag < 0.02*cycle {
		errs = append(errs, fmt.Sprintf("median send delay %.2f ms, under 2 %% of a %.2f ms cycle: the run would not say gen_bound", lag, cycle))
	}
	if f := loadgen.QuantileMs(free.Lag, 50); f > lag/5 {
		errs = append(errs, fmt.Sprintf("without a generator the users' sends are late by %.3f ms (p50), with one %.3f ms", f, lag))
	}
	return errs
}
