package profile

import (
	"context"
	"testing"
	"time"
)

// The acceptance test: a server doing hotA work in arm A and hotB
// work in arm B, sampled by perf under real HTTP load over loopback for a
// few pairs (ABBA order), gives a differential that names both functions
// with the right sign and intervals excluding 0.
//
// Each run serves a fixed 1,500 requests, so a busy box slows it rather
// than thinning its samples; at load 12-16 on two cores five pairs took
// 17 s and gave hotA -55 [-78, -31] and hotB +51 [+39, +62] µs/req.
func TestDifferentialOfTheSwap(t *testing.T) {
	if testing.Short() {
		t.Skip("ten profiled runs under load: not in -short")
	}
	needPerf(t)
	servers := map[string]*hotServer{"A": startHotServer(t, "A"), "B": startHotServer(t, "B")}
	run := func(arm string) Run {
		h := servers[arm]
		t0 := time.Now()
		rec, err := StartPerf(context.Background(), Target{Name: "hotserver " + arm, Lister: ProcessTree(h.pid())}, PerfOptions{Hz: 1999})
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		c0 := cpuUs(t, h.pid())
		// 1,500 requests are ~200 ms of the server's CPU, ~400 samples
		n := loadN(t, h.addr, 2, 1500, 5*time.Second)
		c1 := cpuUs(t, h.pid())
		t2 := time.Now()
		p, err := rec.Stop()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d requests, %d samples, %.0f µs CPU; start %s, stop %s", arm, n, p.Samples, c1-c0, t1.Sub(t0), time.Since(t2))
		return Run{Profile: p, Cost: Cost{Requests: n, CPUUs: c1 - c0}}
	}
	// A busy box can leave one pair of the five far off (a CI run: one A
	// run took 424 ms of CPU for its 1,500 requests where the others took
	// ~250 ms, a third of it unsampled, and hotA's interval reached over 0:
	// no verdict, which is what the data allowed). Such a comparison is
	// measured once more, as a user would; a verdict of the wrong sign
	// fails at once.
	var d *Diff
	for attempt := 1; ; attempt++ {
		var a, b []Run
		for i := range 5 {
			if i%2 == 0 {
				a = append(a, run("A"))
				b = append(b, run("B"))
			} else {
				b = append(b, run("B"))
				a = append(a, run("A"))
			}
		}
		var err error
		if d, err = Compare(a, b, DiffOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, f := range d.Functions[:min(6, len(d.Functions))] {
			e := f.Total
			t.Logf("%d. %s: %.1f -> %.1f µs/req, %+.1f [%+.1f, %+.1f] %s %s; pairs %.1f", i+1, f.Name, e.A, e.B, e.Delta, e.Low, e.High, e.Verdict, e.Reason, e.Deltas)
		}
		t.Logf("%s; %s; warnings %q", d.Method, d.Multiplicity, d.Warnings)
		undecided := false
		for name, want := range map[string]string{"main.hotA": "IMPROVES", "main.hotB": "WORSENS"} {
			e := byName(d)[name].Total
			wrong := map[string]string{"IMPROVES": "WORSENS", "WORSENS": "IMPROVES"}[want]
			if e.Verdict == wrong {
				t.Fatalf("%s: %s, want %s", name, e.Verdict, want)
			}
			undecided = undecided || e.Verdict != want
		}
		if !undecided || attempt == 2 {
			break
		}
		t.Logf("attempt %d left a function without a verdict: measured again", attempt)
	}
	fns := byName(d)
	for name, want := range map[string]string{"main.hotA": "IMPROVES", "main.hotB": "WORSENS"} {
		e := fns[name].Total
		if e.Verdict != want {
			t.Errorf("%s: %s (%s), want %s", name, e.Verdict, e.Reason, want)
		}
		if !(e.Low > 0 || e.High < 0) {
			t.Errorf("%s: interval [%g, %g] includes 0", name, e.Low, e.High)
		}
		if (e.Delta < 0) != (want == "IMPROVES") {
			t.Errorf("%s: delta %+.1f µs/req has the wrong sign", name, e.Delta)
		}
	}
	// The two moves are of the same work (Heavy - Light rounds of similar
	// cost): each is most of what changed.
	top := map[string]bool{d.Functions[0].Name: true, d.Functions[1].Name: true, d.Functions[2].Name: true}
	if !top["main.hotA"] || !top["main.hotB"] {
		t.Errorf("hotA and hotB are not among the three largest changes: %q", []string{d.Functions[0].Name, d.Functions[1].Name, d.Functions[2].Name})
	}
}
