package loadgen

import (
	"strings"
	"testing"
	"time"
)

func TestGeneratorBottleneckWarnings(t *testing.T) {
	busy := selfStats{cpu: 2 * time.Second * time.Duration(maxProcs()), measured: 2 * time.Second, gcPause: 100 * time.Millisecond}
	res := &Result{Lag: NewHist(), Errors: map[string]int64{}, Count: 1000, Late: 200, Dropped: 3}
	_ = res.Lag.RecordValue(50_000)
	w := strings.Join(busy.warnings(Spec{Rate: 1000, MaxInflight: 16}, res), "\n")
	for _, want := range []string{"bottleneck", "GC pauses", "pacer lag", "late", "dropped"} {
		if !strings.Contains(w, want) {
			t.Errorf("no %q warning in %q", want, w)
		}
	}
	quiet := selfStats{cpu: 100 * time.Millisecond, measured: 2 * time.Second}
	if w := quiet.warnings(Spec{Clients: 4}, &Result{Lag: NewHist()}); len(w) != 0 {
		t.Errorf("quiet generator warned: %v", w)
	}
}
