package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestStallMakesRequestsLate: bench/workload/results decides whether an
// open loop held its rate from intended − late − dropped − undecided,
// because the response count cannot show a generator that sent late. Here
// a real loopback server holds every request that arrives in a 500 ms
// stretch until the stretch ends, with two in-flight slots: the requests
// due meanwhile cannot leave until it ends, so at least all of them but the
// two in the slots must count as late, while every request still gets its
// response (count == intended, so the rate of responses looks held).
func TestStallMakesRequestsLate(t *testing.T) {
	const rate, stallFrom, stallFor = 500.0, 400 * time.Millisecond, 500 * time.Millisecond
	var mu sync.Mutex
	var first time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		now := time.Now()
		mu.Lock()
		if first.IsZero() {
			first = now // the first request is due at the run's start
		}
		from := first.Add(stallFrom)
		mu.Unlock()
		if to := from.Add(stallFor); !now.Before(from) && now.Before(to) {
			time.Sleep(time.Until(to))
		}
	}))
	defer srv.Close()
	tgt, err := NewHTTPTarget(HTTPSpec{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Rate: rate, Duration: 1500 * time.Millisecond, Window: time.Second, Timeout: 5 * time.Second, MaxInflight: 2}
	res := Run(context.Background(), spec, tgt)
	onTime := res.Intended - res.Late - res.Dropped - res.Undecided
	t.Logf("intended %d, count %d, late %d, dropped %d, undecided %d, errors %v, lag p99 %.1f ms",
		res.Intended, res.Count, res.Late, res.Dropped, res.Undecided, res.Errors, QuantileMs(res.Lag, 99))
	if res.Count != res.Intended {
		t.Errorf("count %d, want every one of the %d intended requests answered", res.Count, res.Intended)
	}
	// Due in the stall, less lateAfter at its end, less the two in the slots.
	minLate := int64(rate*(stallFor-lateAfter).Seconds()) - 2
	if res.Late < minLate {
		t.Errorf("late %d, want at least %d: the requests due in a %s stall with both slots held", res.Late, minLate, stallFor)
	}
	if float64(onTime) >= 0.99*float64(res.Intended) {
		t.Errorf("%d of %d sent on time: a %s stall must fail a 1 %% held-rate check", onTime, res.Intended, stallFor)
	}
}
