package profile

import (
	"math/rand/v2"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// costlyVersusCheap are two arms 50x apart, as a sequential scan (A,
// 14,000 µs per request) against an index scan (B, 280): the index's
// btgettuple exists in B only, at 35 µs per request.
func costlyVersusCheap() (a, b simArm) {
	a = simArm{"seqscan": 13900, "parse": 50, "exec": 50}
	b = simArm{"btgettuple": 35, "index": 145, "parse": 50, "exec": 50}
	return a, b
}

// timedPairs draws pairs of runs of equal CPU time, as runs of one
// duration on a saturated target are: the costly arm serves 50x fewer
// requests, so one of its samples is worth 50x more µs per request (30
// against 0.6 here).
func timedPairs(rng *rand.Rand, a, b simArm, pairs int) (ra, rb []Run, meanDrift float64) {
	total := func(s simArm) (t float64) {
		for _, v := range s {
			t += v
		}
		return t
	}
	const cpuUs = 0.8e6
	for range pairs {
		drift := 1 + 0.02*rng.NormFloat64()
		meanDrift += drift / float64(pairs)
		ra = append(ra, simRun(rng, a, drift, int64(cpuUs/total(a))))
		rb = append(rb, simRun(rng, b, drift, int64(cpuUs/total(b))))
	}
	return ra, rb, meanDrift
}

// A function sampled in every run of the cheap arm and in none of the
// costly one is decided on that evidence, WORSENS with the truth in its
// interval, though one sample of the costly arm (30 µs per request) is
// near its whole cost: the costly arm's 6 x 467 samples would have caught
// 7 of it, had it cost 35 µs per request there too. (With the spread
// floored at one sample of the costly arm it was "~" in 16 of 20 seeds.)
func TestCompareDecidesTheCheapArmsNewFunction(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	a, b := costlyVersusCheap()
	ra, rb, drift := timedPairs(rng, a, b, 6)
	d, err := Compare(ra, rb, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"btgettuple": "WORSENS", "seqscan": "IMPROVES"} {
		e := byName(d)[name].Total
		truth := (b[name] - a[name]) * drift
		t.Logf("%s: %.1f -> %.1f µs/req, delta %.1f [%.1f, %.1f] at %.4f, p %.2g, %s %s", name, e.A, e.B, e.Delta, e.Low, e.High, e.Confidence, e.P, e.Verdict, e.Reason)
		if e.Verdict != want || e.Low > truth || e.High < truth {
			t.Errorf("%s: %s, interval [%.1f, %.1f], truth %.1f; want %s with the truth inside", name, e.Verdict, e.Low, e.High, truth, want)
		}
	}
}

// The absent arm's zeros are not taken for more than they are: a function
// that costs the same in both arms, so rare in the costly arm's samples
// that it is often absent from all its runs, is called WORSENS in at most
// about the FDR of experiments.
func TestCompareAbsenceHoldsTheNull(t *testing.T) {
	timing.Only(t, "300 simulated experiments")
	rng := rand.New(rand.NewPCG(7, 3))
	a, b := costlyVersusCheap()
	a["shared"], b["shared"] = 5, 5 // 0.125 samples per costly run: absent from all 6 in a third of experiments
	const trials = 300
	absent, wrong := 0, 0
	for range trials {
		ra, rb, _ := timedPairs(rng, a, b, 6)
		d, err := Compare(ra, rb, DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e := byName(d)["shared"].Total
		if e.A == 0 {
			absent++
		}
		if e.Verdict != "~" {
			wrong++
		}
	}
	t.Logf("absent from every costly run in %d of %d experiments; a verdict in %d", absent, trials, wrong)
	if absent < trials/10 {
		t.Fatalf("the function was absent from the costly arm in only %d experiments: the test does not test absence", absent)
	}
	if wrong > trials*8/100 {
		t.Errorf("a verdict on an unchanged function in %d of %d experiments, want about 5 %% at most", wrong, trials)
	}
}
