package loadgen_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
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
	tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	spec := loadgen.Spec{Rate: rate, Duration: 1500 * time.Millisecond, Window: time.Second, Timeout: 5 * time.Second, MaxInflight: 2}
	res := loadgen.Run(context.Background(), spec, tgt)
	onTime := res.Intended - res.Late - res.Dropped - res.Undecided
	t.Logf("intended %d, count %d, late %d, dropped %d, undecided %d, errors %v, lag p99 %.1f ms",
		res.Intended, res.Count, res.Late, res.Dropped, res.Undecided, res.Errors, loadgen.QuantileMs(res.Lag, 99))
	if res.Count != res.Intended {
		t.Errorf("count %d, want every one of the %d intended requests answered", res.Count, res.Intended)
	}
	// Due in the stall, less loadgen.LateAfter at its end, less the two in the slots.
	minLate := int64(rate*(stallFor-loadgen.LateAfter).Seconds()) - 2
	if res.Late < minLate {
		t.Errorf("late %d, want at least %d: the requests due in a %s stall with both slots held", res.Late, minLate, stallFor)
	}
	if float64(onTime) >= 0.99*float64(res.Intended) {
		t.Errorf("%d of %d sent on time: a %s stall must fail a 1 %% held-rate check", onTime, res.Intended, stallFor)
	}
}

// TestBacklogAnsweredAfterWindow: a target with half the capacity the rate
// asks for answers the requests due in the window partly after it; the
// run counts them all (count == intended), says how many came late, and
// its in-window rate agrees with the server's own count of the responses
// it finished inside the window (the oracle).
func TestBacklogAnsweredAfterWindow(t *testing.T) {
	const rate, serve = 400.0, 10 * time.Millisecond // 2 slots x 100/s = 200/s of capacity
	var mu sync.Mutex
	var finished []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(serve)
		mu.Lock()
		finished = append(finished, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	spec := loadgen.Spec{Rate: rate, Duration: time.Second, Window: time.Second, Timeout: 5 * time.Second, MaxInflight: 2}
	res, measureAt, end := runWindow(spec, tgt)
	mu.Lock()
	var inside int64
	for _, f := range finished {
		if !f.Before(measureAt) && f.Before(end) {
			inside++
		}
	}
	mu.Unlock()
	t.Logf("intended %d, count %d, after %d, server finished %d inside the window; warnings %q", res.Intended, res.Count, res.After, inside, res.Warnings)
	if res.Count != res.Intended || res.After < res.Count/4 {
		t.Fatalf("count %d of %d intended, %d after the window: want all answered and a quarter or more after", res.Count, res.Intended, res.After)
	}
	if got := res.Count - res.After; got < inside-4 || got > inside+4 {
		t.Errorf("%d answered inside the window by the run's count, %d by the server's", got, inside)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "came after the window closed")
	}
	if !found {
		t.Errorf("no warning that the backlog was answered after the window: %q", res.Warnings)
	}
}
