package profile

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// simArm is the truth a simulated run is drawn from: each function's CPU
// per request (µs), all under "main".
type simArm map[string]float64

// simRun draws one run: the box's drift multiplies every cost (shared by
// the two runs of a pair), requests are served, and perf's samples fall
// on the functions in proportion to their CPU (multinomial, at 2 ms).
func simRun(rng *rand.Rand, truth simArm, drift float64, requests int64) Run {
	const period = 2_000_000
	names := sortedKeys(truth)
	var total float64
	for _, n := range names {
		total += truth[n] * drift
	}
	cpuUs := total * float64(requests)
	samples := int64(cpuUs * 1e3 / period)
	counts := map[string]int64{}
	for range samples {
		x := rng.Float64() * total
		for _, n := range names {
			x -= truth[n] * drift
			if x < 0 {
				counts[n]++
				break
			}
		}
	}
	f := newFolder()
	for _, n := range names {
		if c := counts[n]; c > 0 {
			f.addFolded([]string{"main", n}, c, c*period)
		}
	}
	p := f.profile()
	p.PeriodNs = period
	return Run{Profile: p, Cost: Cost{Requests: requests, CPUUs: cpuUs * (1 + 0.01*rng.NormFloat64())}}
}

func simPairs(rng *rand.Rand, a, b simArm, pairs int) (ra, rb []Run) {
	ra, rb, _ = simPairsDrift(rng, a, b, pairs)
	return ra, rb
}

// simPairsDrift also returns the mean drift, which scales the true change.
func simPairsDrift(rng *rand.Rand, a, b simArm, pairs int) (ra, rb []Run, meanDrift float64) {
	for i := range pairs {
		drift := 1 + 0.03*float64(i) + 0.02*rng.NormFloat64()
		meanDrift += drift / float64(pairs)
		ra = append(ra, simRun(rng, a, drift, 2000))
		rb = append(rb, simRun(rng, b, drift, 2000))
	}
	return ra, rb, meanDrift
}

func byName(d *Diff) map[string]FunctionDiff {
	out := map[string]FunctionDiff{}
	for _, f := range d.Functions {
		out[f.Name] = f
	}
	return out
}

func background() simArm {
	return simArm{"parse": 15, "write": 10, "gc": 6, "lock": 3, "log": 1}
}

// The differential names both functions whose cost the arms swap, with
// the right sign and an interval that excludes 0 and holds the truth.
func TestCompareFindsTheSwap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := background(), background()
	a["hotA"], a["hotB"] = 100, 20
	b["hotA"], b["hotB"] = 20, 100
	ra, rb := simPairs(rng, a, b, 5)
	d, err := Compare(ra, rb, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fns := byName(d)
	for name, want := range map[string]string{"hotA": "IMPROVES", "hotB": "WORSENS"} {
		e := fns[name].Total
		truth := b[name] - a[name]
		t.Logf("%s: %.1f -> %.1f µs/req, delta %.1f [%.1f, %.1f] at %.4f, p %.2g, %s", name, e.A, e.B, e.Delta, e.Low, e.High, e.Confidence, e.P, e.Verdict)
		if e.Verdict != want || e.Low > truth || e.High < truth || e.Low*e.High <= 0 {
			t.Errorf("%s: %s, interval [%.1f, %.1f], truth %.0f; want %s", name, e.Verdict, e.Low, e.High, truth, want)
		}
	}
	if d.Functions[0].Name != "hotA" && d.Functions[0].Name != "hotB" {
		t.Errorf("ranked first: %s", d.Functions[0].Name)
	}
	if e := fns["main"].Total; e.Verdict != "~" {
		t.Errorf("main's total does not change (the swap cancels), verdict %s delta %.1f", e.Verdict, e.Delta)
	}
	t.Log(d.Method, "; ", d.Multiplicity)
}

// With identical arms, a notebook sees a false verdict on some function in
// at most about FDR of its experiments (Benjamini-Hochberg's guarantee
// under the null), and every verdict agrees with its interval.
func TestCompareNullHoldsFDR(t *testing.T) {
	timing.Only(t, "a simulation: pure arithmetic, ten times slower under -race for nothing")
	rng := rand.New(rand.NewPCG(3, 4))
	const sims = 300
	falseExps := 0
	for range sims {
		ra, rb := simPairs(rng, background(), background(), 4)
		d, err := Compare(ra, rb, DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		any := false
		for _, f := range d.Functions {
			for _, e := range []Estimate{f.Total, f.Self} {
				if e.Verdict != "~" {
					any = true
				}
				checkVerdictMatchesInterval(t, f.Name, e)
			}
		}
		if any {
			falseExps++
		}
	}
	rate := float64(falseExps) / sims
	t.Logf("false verdicts in %.3f of %d experiments", rate, sims)
	if rate > 0.08 {
		t.Errorf("false verdict in %.3f of experiments with identical arms, FDR is 0.05", rate)
	}
}

func checkVerdictMatchesInterval(t *testing.T, name string, e Estimate) {
	t.Helper()
	if !e.Tested || math.IsNaN(e.Low) {
		if e.Verdict != "~" {
			t.Fatalf("%s: verdict %s without an interval", name, e.Verdict)
		}
		return
	}
	excludes := e.Low > 0 || e.High < 0
	if excludes != (e.Verdict != "~") {
		t.Fatalf("%s: verdict %s but interval [%g, %g] at %g (p %g, adjusted %g)", name, e.Verdict, e.Low, e.High, e.Confidence, e.P, e.PAdj)
	}
	if !(e.Low <= e.Delta && e.Delta <= e.High) {
		t.Fatalf("%s: estimate %g outside [%g, %g]", name, e.Delta, e.Low, e.High)
	}
}

// Across simulated experiments with real changes, the intervals of the
// functions called changed miss the true change in at most about FDR of
// the calls of an experiment, on average (Benjamini and Yekutieli's false
// coverage rate, which their adjusted intervals bound).
func TestCompareCoverage(t *testing.T) {
	timing.Only(t, "a simulation: pure arithmetic, ten times slower under -race for nothing")
	rng := rand.New(rand.NewPCG(5, 6))
	a := background()
	b := background()
	b["parse"], b["gc"] = 12, 9
	const sims = 600
	var fcr float64
	called := 0
	for range sims {
		ra, rb, drift := simPairsDrift(rng, a, b, 6)
		d, err := Compare(ra, rb, DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		miss, r := 0, 0
		for _, f := range d.Functions {
			e := f.Total
			checkVerdictMatchesInterval(t, f.Name, e)
			truth := (b[f.Name] - a[f.Name]) * drift
			if f.Name == "main" {
				truth = 0
				for n := range a {
					truth += (b[n] - a[n]) * drift
				}
			}
			if e.Verdict != "~" {
				r++
				if truth < e.Low || truth > e.High {
					miss++
				}
			}
		}
		called += r
		if r > 0 {
			fcr += float64(miss) / float64(r) / sims
		}
	}
	t.Logf("false coverage rate %.3f over %d calls in %d experiments", fcr, called, sims)
	if called < 100 || fcr > 0.07 {
		t.Errorf("false coverage rate %.3f over %d calls", fcr, called)
	}
}

func TestCompareErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ra, rb := simPairs(rng, background(), background(), 2)
	if _, err := Compare(ra, rb[:1], DiffOptions{}); err == nil {
		t.Error("unpaired runs accepted")
	}
	rb[1].Cost.Requests = 0
	if _, err := Compare(ra, rb, DiffOptions{}); err == nil {
		t.Error("a run with no requests accepted")
	}
	d, err := Compare(ra[:1], rb[:1], DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Functions {
		if f.Total.Verdict != "~" {
			t.Errorf("one pair gave %s a verdict", f.Name)
		}
	}
}

// The tree's frames carry the same figures as the functions where a
// function has one frame.
func TestCompareTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a, b := background(), background()
	a["hotA"], b["hotA"] = 100, 20
	ra, rb := simPairs(rng, a, b, 4)
	d, err := Compare(ra, rb, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tree.Children) != 1 || d.Tree.Children[0].Name != "main" {
		t.Fatalf("tree root children %+v", d.Tree.Children)
	}
	var hot *DiffNode
	for _, c := range d.Tree.Children[0].Children {
		if c.Name == "hotA" {
			hot = c
		}
	}
	if hot == nil || hot.Verdict != "IMPROVES" {
		t.Fatalf("hotA frame: %+v", hot)
	}
	f := byName(d)["hotA"].Total
	if math.Abs(hot.Delta-f.Delta) > 1e-9 || math.Abs(hot.A-f.A) > 1e-9 {
		t.Errorf("frame %g/%g, function %g/%g", hot.A, hot.Delta, f.A, f.Delta)
	}
	if d.Tree.Verdict != "IMPROVES" {
		t.Errorf("the whole target saves 80 µs/req: %s %g", d.Tree.Verdict, d.Tree.Delta)
	}
}
