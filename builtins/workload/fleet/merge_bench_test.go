package fleet_test

import (
	"testing"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
)

// BenchmarkMerge64 is the coordinator's cost of merging 64 agents'
// results as they arrive on the wire: decoding each agent's HDR V2 base64
// histograms (the run's, the successes', 30 windows') and adding them.
func BenchmarkMerge64(b *testing.B) {
	l := fleettest.Load{Values: 20000, Seed: 64, Windows: 30, DieAgent: -1}
	var outs []fleet.Outcome
	var wire int
	for i := range 64 {
		res, err := fleettest.Fill(&fleet.Result{Errors: map[string]int64{}, Duration: 30}, l, i)
		if err != nil {
			b.Fatal(err)
		}
		wire += len(res.Hist) + len(res.OK)
		for _, w := range res.Windows {
			wire += len(w.Hist)
		}
		outs = append(outs, fleet.Outcome{Name: "a", Result: res})
	}
	for b.Loop() {
		if _, err := fleet.Merge(outs, fleet.MergeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(wire)/64, "hist-bytes/agent")
}
