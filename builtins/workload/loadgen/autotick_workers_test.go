package loadgen_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
)

// Workers (https here) wake once per request whatever the tick, so the
// default tick leaves them precise: a tick would only delay their sends.
func TestAutoTickNotForWorkers(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: srv.URL + "/", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	spec := loadgen.Spec{Rate: 8000, Duration: 200 * time.Millisecond, Window: 200 * time.Millisecond, Timeout: time.Second, MaxInflight: 64, TickAuto: true}
	s := spy(tgt)
	res := loadgen.Run(context.Background(), spec, s)
	if loops, _ := s.counts(); loops != 0 {
		t.Fatalf("https ran on %d event loops, want workers", loops)
	}
	if res.Tick != 0 {
		t.Errorf("workers ran with tick %s, want none", res.Tick)
	}
	if res.Count+loadgen.SumErrors(res.Errors)+res.Dropped != res.Intended || res.Intended != 1600 {
		t.Errorf("intended %d (want 1600) = count %d + errors %v + dropped %d?", res.Intended, res.Count, res.Errors, res.Dropped)
	}
}
