package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchmath"
)

// samples are drawn from a few shapes (normal, skewed, ties, equal sizes
// and not) so the cross-check covers the exact, tied and approximate paths.
func crossCheckSamples() [][2][]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, loc, scale float64, round bool) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = loc + scale*rng.ExpFloat64()
			if round {
				xs[i] = math.Round(xs[i])
			}
		}
		return xs
	}
	var out [][2][]float64
	for _, n := range []int{1, 2, 3, 4, 5, 6, 8, 10, 20, 31, 45, 60} {
		for _, m := range []int{n, n + 3} {
			out = append(out,
				[2][]float64{draw(n, 100, 10, false), draw(m, 105, 10, false)},
				[2][]float64{draw(n, 100, 3, true), draw(m, 101, 3, true)},
			)
		}
	}
	return out
}

// TestMannWhitneyMatchesBenchmath cross-checks samples without ties small
// enough for both to count exactly. (With ties go-moremath, which benchmath
// uses, gets the exact p wrong: TestMannWhitneyEnumeration is the oracle.)
func TestMannWhitneyMatchesBenchmath(t *testing.T) {
	for _, s := range crossCheckSamples() {
		a, b := s[0], s[1]
		if len(tieGroups(a, b)) < len(a)+len(b) || len(a)+len(b) > exactLimit {
			continue
		}
		want := benchmath.AssumeNothing.Compare(
			benchmath.NewSample(append([]float64(nil), a...), &benchmath.DefaultThresholds),
			benchmath.NewSample(append([]float64(nil), b...), &benchmath.DefaultThresholds)).P
		got := MannWhitney(a, b)
		if math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("n=%d+%d: p = %.12g, benchmath %.12g (a=%v b=%v)", len(a), len(b), got, want, a, b)
		}
	}
}

func TestMedianCIMatchesBenchmath(t *testing.T) {
	for _, s := range crossCheckSamples() {
		for _, xs := range s {
			want := benchmath.AssumeNothing.Summary(
				benchmath.NewSample(append([]float64(nil), xs...), &benchmath.DefaultThresholds), Confidence)
			med, lo, hi := MedianCI(xs, Confidence)
			if med != want.Center || lo != want.Lo || hi != want.Hi {
				t.Errorf("n=%d: median %g [%g, %g], benchmath %g [%g, %g]", len(xs), med, lo, hi, want.Center, want.Lo, want.Hi)
			}
		}
	}
}

func TestMannWhitneyAllEqual(t *testing.T) {
	if p := MannWhitney([]float64{5, 5, 5}, []float64{5, 5}); p != 1 {
		t.Errorf("p = %g for identical samples, want 1", p)
	}
}

// TestBootstrapCoverage draws paired samples whose means have a known ratio
// and checks that the 95 % interval holds it about 95 times in 100.
func TestBootstrapCoverage(t *testing.T) {
	const reps, n, ratio = 200, 20, 1.3
	rng := rand.New(rand.NewPCG(7, 11))
	covered := 0
	for range reps {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			drift := rng.NormFloat64() * 3 // shared by the pair, like a box getting busier
			a[i] = 100 + drift + 8*rng.NormFloat64()
			b[i] = ratio*100 + drift + 8*ratio*rng.NormFloat64()
		}
		lo, hi := BootstrapRatioCI(a, b, Confidence, 1000)
		if lo <= ratio && ratio <= hi {
			covered++
		}
	}
	cov := float64(covered) / reps
	if cov < 0.90 || cov > 0.99 {
		t.Errorf("coverage %.3f of the 95 %% interval, want 0.90-0.99", cov)
	}
	t.Logf("coverage %.3f", cov)
}

func TestBootstrapDeterministic(t *testing.T) {
	a, b := []float64{10, 11, 12, 13}, []float64{14, 15, 13, 16}
	lo1, hi1 := BootstrapRatioCI(a, b, Confidence, 2000)
	lo2, hi2 := BootstrapRatioCI(a, b, Confidence, 2000)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("two calls gave [%g, %g] and [%g, %g]", lo1, hi1, lo2, hi2)
	}
	if !(lo1 <= hi1) || lo1 < 14.0/13-1e-9 || hi1 > 16.0/10+1e-9 {
		t.Errorf("interval [%g, %g] outside the possible ratios", lo1, hi1)
	}
}

// TestChanceFromArrangements checks the rank-arrangement chance against a
// count over every assignment of ranks to arms.
func TestChanceFromArrangements(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5} {
		total, above := 0, 0
		// Choose which n of the 2n ranks belong to B: bitmasks with n bits.
		for mask := 0; mask < 1<<(2*n); mask++ {
			if popcount(mask) != n {
				continue
			}
			total++
			if mask == (1<<(2*n))-(1<<n) { // B holds the n highest ranks
				above++
			}
		}
		want := float64(above) / float64(total)
		if got := ChanceAllAbove(n, n); math.Abs(got-want) > 1e-12 {
			t.Errorf("%d pairs: chance %g, counted %g", n, got, want)
		}
	}
	if got := 1 / ChanceAllAbove(2, 2); math.Round(got) != 6 {
		t.Errorf("2 pairs: 1 time in %g, want 6", got)
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
