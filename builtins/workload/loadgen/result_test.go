package loadgen

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// synthetic is a result of n requests with latencies drawn from rng, in
// windows of one second; all, when given, records every latency too.
func synthetic(rng *rand.Rand, n, windows int, all *hdrhistogram.Histogram) *Result {
	r := NewResult()
	for range windows {
		r.Windows = append(r.Windows, Window{Errors: map[string]int64{"timeout": 1}})
		r.WindowHists = append(r.WindowHists, newWindowHist())
		r.Errors["timeout"]++
	}
	for i := range n {
		us := int64(100 + rng.ExpFloat64()*2000)
		for _, h := range []*hdrhistogram.Histogram{r.Hist, r.OK, r.WindowHists[i%windows], all} {
			if h != nil {
				_ = h.RecordValue(us)
			}
		}
		r.Windows[i%windows].Count++
	}
	r.Count, r.Intended = int64(n), int64(n)+int64(windows)
	r.Measured, r.CPU = time.Duration(windows)*time.Second, 300*time.Millisecond
	return r
}

// Merging agents' results equals having recorded all their requests in one
// histogram, and the counts add up; a late agent's windows land later.
func TestResultMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := NewHist()
	a, b := synthetic(rng, 5000, 3, all), synthetic(rng, 3000, 3, all)
	b.Warnings, b.Interrupted, b.Measured = []string{"b warned"}, true, 2*time.Second
	a.GCPause, b.GCPause = 3*time.Millisecond, 4*time.Millisecond
	m := NewResult()
	m.Merge(a, 0)
	m.Merge(b, 1)
	m.WindowFigures(time.Second, 4*time.Second)
	if !m.Hist.Equals(all) || m.Count != 8000 || m.Intended != 8006 || m.Errors["timeout"] != 6 {
		t.Fatalf("merged: count %d intended %d errors %v, hist equal %v", m.Count, m.Intended, m.Errors, m.Hist.Equals(all))
	}
	if m.CPU != 600*time.Millisecond || m.GCPause != 7*time.Millisecond || m.Measured != 3*time.Second || !m.Interrupted || len(m.Warnings) != 1 {
		t.Errorf("merged CPU %s, GC pause %s, measured %s, interrupted %v, warnings %v", m.CPU, m.GCPause, m.Measured, m.Interrupted, m.Warnings)
	}
	if len(m.Windows) != 4 || m.Windows[0].Count != a.Windows[0].Count || m.Windows[3].Count != b.Windows[2].Count ||
		m.Windows[1].Count != a.Windows[1].Count+b.Windows[0].Count || m.Windows[1].Errors["timeout"] != 2 {
		t.Fatalf("windows not aligned: %+v", m.Windows)
	}
	if w := m.Windows[3]; w.Start != 3 || w.RPS != float64(w.Count) || w.P99 != QuantileMs(b.WindowHists[2], 99) {
		t.Errorf("window 3 figures: %+v", w)
	}
}

// BenchmarkMerge64 merges 64 agents' results of 30 windows each, decoded
// from the wire, as a fleet's coordinator does; bytes/agent is the size of
// one agent's result on the wire.
func BenchmarkMerge64(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var outs []*Result
	var wire int
	for range 64 {
		raw, err := json.Marshal(synthetic(rng, 20000, 30, nil))
		if err != nil {
			b.Fatal(err)
		}
		wire += len(raw)
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil {
			b.Fatal(err)
		}
		outs = append(outs, &r)
	}
	b.ReportAllocs()
	for b.Loop() {
		m := NewResult()
		for _, r := range outs {
			m.Merge(r, 0)
		}
		m.WindowFigures(time.Second, 30*time.Second)
	}
	b.ReportMetric(float64(wire)/64, "bytes/agent")
}
