package fleet_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
	"github.com/benchbook/benchbook/builtins/workload/fleet/fleettest"
)

// BenchmarkMerge64 is the coordinator's cost of merging 64 agents'
// reports as they arrive on the wire: decoding each (its HDR V2 base64
// histograms: the run's, the successes', 30 windows') and merging them.
// loadgen's BenchmarkMerge64 is the merge alone.
func BenchmarkMerge64(b *testing.B) {
	l := fleettest.Load{Values: 20000, Seed: 64, Windows: 30, DieAgent: -1}
	var raws [][]byte
	var wire int
	for i := range 64 {
		raw, err := json.Marshal(fleettest.Fill(l, i, 30*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		wire += len(raw)
		raws = append(raws, raw)
	}
	for b.Loop() {
		outs := make([]fleet.Outcome, len(raws))
		for i, raw := range raws {
			outs[i] = fleet.Outcome{Name: "a", Report: &fleet.Report{}}
			if err := json.Unmarshal(raw, outs[i].Report); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := fleet.Merge(outs, fleet.MergeOptions{Window: time.Second, Duration: 30 * time.Second}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(wire)/64, "bytes/agent")
}
