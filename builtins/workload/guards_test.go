package workload

import (
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
)

// The record shows each trip under its run, escaped, and a stored run keeps
// its trips (a cached invalid run stays invalid).
func TestTripsInRecordAndCache(t *testing.T) {
	r := &Run{d: runData{Kind: "http", Label: "x", Result: &loadgen.Result{Hist: newHist(), Errors: map[string]int64{}, Trips: []guard.Trip{
		{At: 1.5, Source: "process <sh>", Kind: "exited", Fatal: true, Evidence: "exit status 3"},
		{At: 2, Source: "postgres", Kind: "log_errors", Evidence: "1 ERROR lines in its log; first: <script>"},
	}}}}
	html := r.HTML()
	for _, want := range []string{"INVALID run", "fatal: process &lt;sh&gt; exited at 1.5s: exit status 3", "warning: postgres log errors at 2.0s", "&lt;script&gt;"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "<script>") || !strings.Contains(r.Markdown(), "- fatal: process <sh> exited") {
		t.Errorf("escaping or Markdown:\n%s\n%s", html, r.Markdown())
	}
	data, err := codec.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	v, err := codec.Decode(data, testModule().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	back := v.(*Run)
	if back.valid() || len(back.d.Trips) != 2 || !strings.Contains(back.String(), "INVALID: process <sh> exited") {
		t.Fatalf("after the cache: valid=%v trips=%v %s", back.valid(), back.d.Trips, back)
	}
}
