package profile

import (
	"context"
	"testing"
	"time"
)

// The hot server's arm A spends five times the work in hotA that it
// spends in hotB: a profile of it under load must say so, with the frames
// named and the samples standing for the CPU the process used.
func TestPerfSamplesHotServer(t *testing.T) {
	needPerf(t)
	h := startHotServer(t, "A")
	rec, err := StartPerf(context.Background(), Target{Name: "hotserver", Lister: ProcessTree(h.pid())}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpu0 := cpuUs(t, h.pid())
	n := load(t, h.addr, 2, 700*time.Millisecond)
	cpu1 := cpuUs(t, h.pid())
	p, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	fns := map[string]Function{}
	for _, f := range p.Functions() {
		fns[f.Name] = f
	}
	a, b := fns["main.hotA"], fns["main.hotB"]
	t.Logf("%d requests, %d samples, window %s, hotA %.3f, hotB %.3f, resolved %.3f, leaves %.3f, pids %v, warnings %q",
		n, p.Samples, p.Window, a.Total, b.Total, p.ResolvedShare(), p.ResolvedLeafShare(), p.PIDs, p.Warnings)
	if p.Samples < 50 {
		t.Fatalf("%d samples in 0.7 s of load", p.Samples)
	}
	if !(a.Total > 2.5*b.Total && b.Total > 0) {
		t.Errorf("hotA %.3f, hotB %.3f of the samples: want hotA about 5 times hotB", a.Total, b.Total)
	}
	// hotA calls nothing, but a timer interrupt taken in it puts kernel
	// frames above it.
	if a.Self < 0.7*a.Total {
		t.Errorf("hotA is a leaf: self %.3f, total %.3f", a.Self, a.Total)
	}
	if p.ResolvedLeafShare() < 0.9 {
		t.Errorf("%.3f of the leaves resolved in a Go binary", p.ResolvedLeafShare())
	}
	fig, err := p.Figures(Cost{Requests: n, CPUUs: cpu1 - cpu0})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("coverage %.3f, %.1f µs/req", fig.Coverage, fig.UsPerReq)
	// /proc's ticks are 10 ms; the window brackets the load.
	if fig.Coverage < 0.8 || fig.Coverage > 1.25 {
		t.Errorf("the samples stand for %.2f of the process's CPU", fig.Coverage)
	}
}
