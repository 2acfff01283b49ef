package metric

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Simulations with known truth: the verdict's false-positive rate over
// identical arms, its power over a real gain, and the coverage of the
// interval of the ratio. Seeded, so a failure reproduces.

// pairedDraw makes n pairs whose B/A ratio is ratio, with a drift shared by
// each pair (the box getting busier) and noise of the given shape.
type noise func(rng *rand.Rand) float64

var noises = map[string]noise{
	"normal":    func(rng *rand.Rand) float64 { return rng.NormFloat64() },
	"lognormal": func(rng *rand.Rand) float64 { return math.Exp(rng.NormFloat64()) - math.Exp(0.5) },
	"heavy": func(rng *rand.Rand) float64 { // Student t, 3 degrees of freedom
		z := rng.NormFloat64()
		var chi float64
		for range 3 {
			x := rng.NormFloat64()
			chi += x * x
		}
		return z / math.Sqrt(chi/3)
	},
}

func pairedDraw(rng *rand.Rand, n int, ratio, sd float64, shape noise, round bool) (a, b []float64) {
	a, b = make([]float64, n), make([]float64, n)
	for i := range n {
		drift := 1 + 0.03*rng.NormFloat64()
		a[i] = 100 * drift * math.Exp(sd*shape(rng))
		b[i] = ratio * 100 * drift * math.Exp(sd*shape(rng))
		if round { // ties, as integer metrics give
			a[i], b[i] = math.Round(a[i]/2)*2, math.Round(b[i]/2)*2
		}
	}
	return a, b
}

func verdictOf(t *testing.T, a, b []float64, better string) string {
	c, err := newComparison(compareInput{metric: "m", better: better, aLabel: "A", bLabel: "B", a: a, b: b})
	if err != nil {
		t.Fatal(err)
	}
	return c.Verdict
}

// TestFalseVerdictRate: with identical arms, IMPROVES or WORSENS may be
// said at most alpha of the time, at every number of pairs from 2 to 8,
// with and without ties. (Before issue 13 the rate was 14 % at 2 pairs.)
func TestFalseVerdictRate(t *testing.T) {
	const trials = 2000
	rng := rand.New(rand.NewPCG(2026, 13))
	for n := 2; n <= 8; n++ {
		for _, round := range []bool{false, true} {
			for _, better := range []string{"higher", "lower"} {
				wrong := 0
				for range trials {
					a, b := pairedDraw(rng, n, 1, 0.02, noises["normal"], round)
					if verdictOf(t, a, b, better) != "~" {
						wrong++
					}
				}
				rate := float64(wrong) / trials
				if rate > defaultAlpha {
					t.Errorf("%d pairs (ties %v, %s better): false verdicts %.3f > alpha %.2f", n, round, better, rate, defaultAlpha)
				}
				t.Logf("%d pairs, ties %v, %s: false-verdict rate %.4f", n, round, better, rate)
			}
		}
	}
}

// TestVerdictPower: a gain far beyond the noise is found at 4 pairs, the
// fewest that can reach p <= 0.05, and in both directions.
func TestVerdictPower(t *testing.T) {
	const trials = 500
	rng := rand.New(rand.NewPCG(7, 7))
	found, worse := 0, 0
	for range trials {
		a, b := pairedDraw(rng, 4, 1.3, 0.02, noises["normal"], false)
		if verdictOf(t, a, b, "higher") == "IMPROVES" {
			found++
		}
		if verdictOf(t, a, b, "lower") == "WORSENS" {
			worse++
		}
	}
	if found < trials*9/10 || worse < trials*9/10 {
		t.Errorf("a 30 %% gain at 4 pairs: IMPROVES %d / %d, WORSENS (lower is better) %d / %d", found, trials, worse, trials)
	}
}

// TestRatioCICoverage: the 95 % interval holds the true ratio at least
// 93 % of the time at 3 to 8 pairs, for normal, skewed and heavy-tailed
// noise. (Before issue 13 the bootstrap's held it 74 % of the time at 3
// pairs and 79 % at 4.)
func TestRatioCICoverage(t *testing.T) {
	const trials, ratio = 2000, 1.3
	rng := rand.New(rand.NewPCG(11, 2026))
	for name, shape := range noises {
		for n := 3; n <= 8; n++ {
			covered := 0
			for range trials {
				a, b := pairedDraw(rng, n, ratio, 0.05, shape, false)
				lo, hi := ratioCI(a, b, confidence)
				if lo <= ratio && ratio <= hi {
					covered++
				}
			}
			cov := float64(covered) / trials
			if cov < 0.93 {
				t.Errorf("%s noise, %d pairs: coverage %.3f of the 95 %% interval, want >= 0.93", name, n, cov)
			}
			t.Logf("%s noise, %d pairs: coverage %.3f", name, n, cov)
		}
	}
}

// TestRatioCIUnpaired covers Welch's interval, used when the arms have
// different numbers of runs.
func TestRatioCIUnpaired(t *testing.T) {
	const trials, ratio = 2000, 1.3
	rng := rand.New(rand.NewPCG(5, 5))
	covered := 0
	for range trials {
		a, _ := pairedDraw(rng, 4, 1, 0.05, noises["normal"], false)
		_, b := pairedDraw(rng, 6, ratio, 0.05, noises["normal"], false)
		lo, hi := ratioCI(a, b, confidence)
		if lo <= ratio && ratio <= hi {
			covered++
		}
	}
	if cov := float64(covered) / trials; cov < 0.93 {
		t.Errorf("4 vs 6 runs: coverage %.3f, want >= 0.93", cov)
	}
	if lo, hi := ratioCI([]float64{100}, []float64{120}, confidence); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("one pair gave an interval [%g, %g]", lo, hi)
	}
}
