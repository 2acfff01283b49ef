package loadgen_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
)

// A real run's result survives the wire: every field and every histogram
// (HDR V2 is lossless) come back as they left.
func TestResultWireRoundTrip(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("fail") != "" {
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	res := loadgen.Run(context.Background(), loadgen.Spec{Rate: 400, MaxInflight: 8, Duration: 300 * time.Millisecond,
		Window: 100 * time.Millisecond, Timeout: time.Second}, tgt)
	if res.Count == 0 || len(res.WindowHists) == 0 {
		t.Fatalf("the run measured nothing: %+v", res)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back loadgen.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]*hdrhistogram.Histogram{"hist": {res.Hist, back.Hist}, "ok": {res.OK, back.OK},
		"service": {res.Service, back.Service}, "lag": {res.Lag, back.Lag}} {
		if !pair[0].Equals(pair[1]) {
			t.Errorf("%s histogram changed on the wire", name)
		}
	}
	for i := range res.WindowHists {
		if !res.WindowHists[i].Equals(back.WindowHists[i]) {
			t.Errorf("window %d histogram changed on the wire", i)
		}
	}
	again, err := json.Marshal(&back)
	if err != nil || string(again) != string(b) {
		t.Errorf("fields changed on the wire (%v):\n%s\n%s", err, b, again)
	}
}

// A generator that collects garbage during the window reports its pauses:
// here the target, in the same process, forces a collection per request.
func TestResultCountsGCPauses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { goruntime.GC() }))
	defer srv.Close()
	tgt, err := h1wire.NewHTTPTarget(h1wire.HTTPSpec{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	spec := loadgen.Spec{Clients: 1, Duration: 200 * time.Millisecond, Window: 100 * time.Millisecond, Timeout: time.Second}
	res := loadgen.Run(context.Background(), spec, tgt)
	if res.Count == 0 || res.GCPause <= 0 || res.GCPause > res.Measured {
		t.Fatalf("%d requests, each with a GC, paused %s over %s", res.Count, res.GCPause, res.Measured)
	}
}
