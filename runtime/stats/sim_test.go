package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// Simulations with known truth, under the conditions users measure in
// (issue 32): iid lognormal noise of 3 %, a drift of 1 or 2 % per pair
// shared by the two runs of a pair, t(3) tails, one run 30 % off, values
// rounded to a coarse step, unequal arms. Seeded, so a failure reproduces;
// run without -race by .ci/test's timing step (runtime/testsupport/timing).

// condition is how runs are drawn around their true level.
type condition struct {
	name string
	// drift is a trend per pair shared by both runs of the pair: pair i
	// sits at 100·(1+drift)^i (the audit's A_i = 100·1.02^i).
	drift float64
	// withinPair makes the drift run by run instead, in abab's rotated
	// order (AB BA AB ...): the second run of a pair sits half a pair's
	// drift above the first, B after A in one pair and before it in the
	// next.
	withinPair bool
	// level is the sd of a random level per pair (a busy neighbour coming
	// and going), on the log scale.
	level float64
	tails bool // t(3) noise scaled to the same sd: heavy tails both ways
	// outlier multiplies one run by 1.3: a B run against the effect when
	// there is one (B lower is better in the power study), any run else.
	outlier bool
	step    float64 // values rounded to multiples of step (ties, zero pairs)
	sd      float64 // run-to-run noise on the log scale; 0.03 when 0
}

var conditions = []condition{
	{name: "iid lognormal"},
	{name: "drift 1 %/pair", drift: 0.01},
	{name: "drift 2 %/pair", drift: 0.02},
	{name: "drift 2 %/pair, run by run", drift: 0.02, withinPair: true},
	{name: "t(3) tails", tails: true},
	{name: "one run x1.3", outlier: true},
}

func (c condition) noise(rng *rand.Rand) float64 {
	sd := c.sd
	if sd == 0 {
		sd = 0.03
	}
	if !c.tails {
		return sd * rng.NormFloat64()
	}
	var chi float64
	for range 3 {
		x := rng.NormFloat64()
		chi += x * x
	}
	return sd * rng.NormFloat64() / math.Sqrt(chi/3) / math.Sqrt(3) // t(3) has variance 3
}

// draw makes na A runs and nb B runs (pair i = run i of each) whose true
// ratio B/A is ratio.
func (c condition) draw(rng *rand.Rand, na, nb int, ratio float64) (a, b []float64) {
	for i := range max(na, nb) {
		lvl := 100 * math.Pow(1+c.drift, float64(i)) * math.Exp(c.level*rng.NormFloat64())
		lvlA, lvlB := lvl, lvl
		if c.withinPair {
			second := math.Sqrt(1 + c.drift)
			if i%2 == 0 {
				lvlB *= second // AB
			} else {
				lvlA *= second // BA
			}
		}
		if i < na {
			a = append(a, lvlA*math.Exp(c.noise(rng)))
		}
		if i < nb {
			b = append(b, ratio*lvlB*math.Exp(c.noise(rng)))
		}
	}
	if c.outlier {
		switch {
		case ratio != 1:
			b[rng.IntN(nb)] *= 1.3 / ratio * ratio // against a B that is lower: B higher
		case rng.IntN(2) == 0:
			a[rng.IntN(na)] *= 1.3
		default:
			b[rng.IntN(nb)] *= 1.3
		}
	}
	if c.step > 0 {
		for _, xs := range [][]float64{a, b} {
			for i, x := range xs {
				xs[i] = math.Max(c.step, math.Round(x/c.step)*c.step)
			}
		}
	}
	return a, b
}

func compareOrFail(t *testing.T, a, b []float64, better string) *Comparison {
	t.Helper()
	c, err := Compare(a, b, Options{Better: better})
	if err != nil {
		t.Fatal(err)
	}
	// The index is the interval's estimate: always inside it, and so is
	// the shown index inside the shown interval.
	if c.CI.Ok() {
		if !(c.CI.Low <= c.Ratio && c.Ratio <= c.CI.High) {
			t.Fatalf("estimate %v outside its interval [%v, %v] (a=%v b=%v)", c.Ratio, c.CI.Low, c.CI.High, a, b)
		}
		if !shownInside(c.Shown()) {
			t.Fatalf("shown index %s outside the shown interval %s to %s (a=%v b=%v)", c.Shown().Index, c.Shown().Low, c.Shown().High, a, b)
		}
	}
	return c
}

func shownInside(s Shown) bool {
	var i, lo, hi float64
	fmt.Sscan(s.Index, &i)
	fmt.Sscan(s.Low, &lo)
	fmt.Sscan(s.High, &hi)
	return lo <= i && i <= hi
}

// skipUnderRace skips a simulation under -race; without it the
// simulations run side by side (pure arithmetic, no timing: the timing
// step's 27 s of them took one of the two cores).
func skipUnderRace(t *testing.T) {
	timing.Only(t, "a simulation: pure arithmetic, ten times slower under -race for nothing")
	t.Parallel()
}

// binomialSlack is how far above p a rate observed over n trials may land
// by chance (one-sided, 1 %): a simulated rate is judged against the
// figure it estimates, not against its own noise.
func binomialSlack(p float64, n int) float64 { return 2.33 * math.Sqrt(p*(1-p)/float64(n)) }

// binomialTail is P(X >= k) for X ~ Binomial(n, p), summed exactly in logs.
func binomialTail(n, k int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	sum := 0.0
	for j := k; j <= n; j++ {
		term := math.Exp(lg(n) - lg(j) - lg(n-j) + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

// mostByChance is the largest count of n trials that a rate of p gives at
// least `level` of the time: more than that is evidence the rate is above
// p, at that level.
func mostByChance(n int, p, level float64) int {
	k := int(p * float64(n))
	for binomialTail(n, k+1, p) >= level {
		k++
	}
	return k
}

// TestFalseVerdictRate: with identical arms, IMPROVES or WORSENS is said at
// most alpha of the time, at every number of pairs from 2 to 16, in each
// condition (and with values rounded to steps of 5), in both directions.
//
// The tolerance comes from the number of studies: a cell of 3,000 fails
// when its count of false verdicts would come by chance less than 1 % /
// (number of cells) of the time were the true rate exactly alpha (the
// exact binomial tail, Bonferroni over the 105 cells, so a method at alpha
// fails the whole test by chance less than 1 % of the time): at most 196
// of 3,000 (6.5 %). That is loose for one cell, so each condition is also
// judged pooled over 6 to 16 pairs (33,000 studies, same rule over the 7
// conditions: at most 5.36 %). The exact size is not simulated but
// enumerated: TestFalseVerdictRateExact (ties and zero pairs) and
// TestPairedIntervalIsTheTest (no ties, 3.1-4.9 %); this simulation adds
// what enumeration cannot (a drift run by run, which makes the two runs
// of a pair not exchangeable) and the whole path from drawn runs.
func TestFalseVerdictRate(t *testing.T) {
	skipUnderRace(t)
	const trials, familyLevel = 3000, 0.01
	conds := append(append([]condition(nil), conditions...), condition{name: "steps of 5", step: 5, level: 0.03})
	const fromPairs, toPairs = 2, 16
	cells := len(conds) * (toPairs - fromPairs + 1)
	perCell := mostByChance(trials, DefaultAlpha, familyLevel/float64(cells))
	pooledTrials := trials * (toPairs - MinPairs(DefaultAlpha) + 1)
	pooledMost := mostByChance(pooledTrials, DefaultAlpha, familyLevel/float64(len(conds)))
	t.Logf("tolerance: %d of %d a cell (%.2f %%), %d of %d pooled from %d pairs (%.2f %%)", perCell, trials,
		100*float64(perCell)/trials, pooledMost, pooledTrials, MinPairs(DefaultAlpha), 100*float64(pooledMost)/float64(pooledTrials))
	for _, cd := range conds {
		pooled := 0
		rates := map[int]float64{}
		for n := fromPairs; n <= toPairs; n++ {
			rng := rand.New(rand.NewPCG(2026, uint64(n)))
			wrong := 0
			for i := range trials {
				a, b := cd.draw(rng, n, n, 1)
				better := "higher"
				if i%2 == 0 {
					better = "lower"
				}
				if compareOrFail(t, a, b, better).Verdict != "~" {
					wrong++
				}
			}
			if n < MinPairs(DefaultAlpha) && wrong > 0 {
				t.Errorf("%s, %d pairs: %d false verdicts where the paired test cannot reach alpha", cd.name, n, wrong)
			}
			if wrong > perCell {
				t.Errorf("%s, %d pairs: %d false verdicts of %d (%.3f), more than alpha %.2f gives by chance (%d)",
					cd.name, n, wrong, trials, float64(wrong)/trials, DefaultAlpha, perCell)
			}
			if n >= MinPairs(DefaultAlpha) {
				pooled += wrong
			}
			rates[n] = float64(wrong) / trials
		}
		if pooled > pooledMost {
			t.Errorf("%s: %d false verdicts of %d studies from %d pairs (%.4f), more than alpha %.2f gives by chance (%d)",
				cd.name, pooled, pooledTrials, MinPairs(DefaultAlpha), float64(pooled)/float64(pooledTrials), DefaultAlpha, pooledMost)
		}
		t.Logf("%s: false-verdict rate at %d..%d pairs%s; pooled from %d pairs %.4f", cd.name, fromPairs, toPairs,
			fmtRates3(rates, fromPairs, toPairs), MinPairs(DefaultAlpha), float64(pooled)/float64(pooledTrials))
	}
}

func fmtRates3(m map[int]float64, from, to int) string {
	s := ""
	for n := from; n <= to; n++ {
		s += fmt.Sprintf(" %d:%.3f", n, m[n])
	}
	return s
}

// TestPowerRisesWithPairs: B 5 % lower (better) in 3 % noise is found more
// often as pairs are added, never less (within two standard errors of the
// simulation), and at least 80 % of the time at 16 pairs, in every
// condition: drift shared within pairs cancels in the pair ratios, and one
// run 30 % off moves one rank. Before issue 32 the unpaired p made power
// fall with a 2 %/pair drift (1.6 % at 16 pairs) and the t-interval let an
// outlier block the verdict.
func TestPowerRisesWithPairs(t *testing.T) {
	skipUnderRace(t)
	const trials = 2000
	for _, cd := range conditions {
		power := map[int]float64{}
		for n := 4; n <= 16; n++ {
			rng := rand.New(rand.NewPCG(5, uint64(n)))
			found := 0
			for range trials {
				a, b := cd.draw(rng, n, n, 0.95)
				if compareOrFail(t, a, b, "lower").Verdict == "IMPROVES" {
					found++
				}
			}
			power[n] = float64(found) / trials
			if n > 4 {
				se := math.Sqrt(power[n]*(1-power[n])/trials + power[n-1]*(1-power[n-1])/trials)
				if power[n] < power[n-1]-2*se {
					t.Errorf("%s: power fell from %.3f at %d pairs to %.3f at %d", cd.name, power[n-1], n-1, power[n], n)
				}
			}
		}
		t.Logf("%s: power at 4..16 pairs %v", cd.name, fmtRates(power, 4, 16))
		if power[16] < 0.8 {
			t.Errorf("%s: power at 16 pairs %.3f, want >= 0.8", cd.name, power[16])
		}
	}
}

func fmtRates(m map[int]float64, from, to int) string {
	s := ""
	for n := from; n <= to; n++ {
		s += fmt.Sprintf(" %d:%.2f", n, m[n])
	}
	return s
}

// coverageBounds are the counts of n studies outside which a coverage is
// evidence against 93-97.5 %, at `level`: fewer covered than a true 93 %
// gives by chance, or more than a true 97.5 % gives (exact binomial tails).
func coverageBounds(n int, level float64) (least, most int) {
	most = mostByChance(n, 0.975, level)
	// The fewest: by symmetry, the most misses a true 7 % of misses gives.
	least = n - mostByChance(n, 0.07, level)
	return least, most
}

// coverageCell is one simulated cell of a coverage study.
type coverageCell struct {
	cd     condition
	na, nb int
	ratio  float64
}

func (c coverageCell) String() string {
	return fmt.Sprintf("%s, %d v %d runs, true ratio %.4f", c.cd.name, c.na, c.nb, c.ratio)
}

// simulateCoverage draws trials studies of a cell and counts those whose
// interval holds the true ratio; the exact confidence is the last
// interval's (it depends on the sizes alone).
func simulateCoverage(t *testing.T, c coverageCell, trials int, seed uint64) (covered int, achieved float64) {
	rng := rand.New(rand.NewPCG(seed, uint64(c.na*100+c.nb)+uint64(math.Round(c.ratio*1e5))<<16))
	for range trials {
		a, b := c.cd.draw(rng, c.na, c.nb, c.ratio)
		iv := RatioCI(a, b, Confidence)
		if !iv.Ok() {
			t.Fatalf("%s: no interval: %s", c, iv.None)
		}
		if iv.Low <= c.ratio && c.ratio <= iv.High {
			covered++
		}
		achieved = iv.Achieved
	}
	return covered, achieved
}

// TestRatioCICoverage: the 95 % interval holds the true ratio between 93 %
// and 97.5 % of the time (neither too narrow nor wastefully wide): paired
// at 6 to 16 pairs in each condition and with values rounded to steps of
// 5 and of 2, unpaired from 3 v 7 runs up (and 7 v 3), with and without
// rounding, at a true ratio of 0.937.
//
// The bounds are the issue's, with no allowance but the simulation's own
// noise: a cell of 3,000 studies fails when its count of covered studies
// would come by chance less than 1 %/(number of cells) of the time were
// the true coverage 93 % (too few) or 97.5 % (too many), by the exact
// binomial tails (Bonferroni over the cells). An exact rank interval has
// the confidence its critical value gives, a little above 95 % (96.9 % at
// 6 pairs, 96.7 % at 3 v 7), inside those bounds; TestRatioCICoverageAcross
// TheGrid moves the true ratio across the grid of rounded values.
func TestRatioCICoverage(t *testing.T) {
	skipUnderRace(t)
	const trials, ratio = 3000, 0.937
	var cells []coverageCell
	paired := append(append([]condition(nil), conditions...),
		condition{name: "steps of 5", step: 5, level: 0.03},
		condition{name: "steps of 2", step: 2, level: 0.03})
	for _, cd := range paired {
		for _, n := range []int{6, 7, 8, 10, 12, 16} {
			cells = append(cells, coverageCell{cd, n, n, ratio})
		}
	}
	for _, cd := range []condition{{name: "iid lognormal"}, {name: "t(3) tails", tails: true}, {name: "steps of 2", step: 2}} {
		for _, sz := range [][2]int{{3, 7}, {3, 9}, {4, 8}, {5, 10}, {6, 12}, {8, 16}, {10, 20}, {7, 3}} {
			cells = append(cells, coverageCell{cd, sz[0], sz[1], ratio})
		}
	}
	least, most := coverageBounds(trials, 0.01/float64(len(cells)))
	t.Logf("bounds: %d to %d of %d covered (%.3f to %.3f)", least, most, trials, float64(least)/trials, float64(most)/trials)
	for _, c := range cells {
		covered, achieved := simulateCoverage(t, c, trials, 11)
		cov := float64(covered) / trials
		if covered < least || covered > most {
			t.Errorf("%s: coverage %.3f of the 95 %% interval (exact %.3f), outside 93-97.5 %% beyond the simulation's noise (%d to %d of %d)",
				c, cov, achieved, least, most, trials)
		}
		t.Logf("%s: coverage %.3f (exact: %.3f)", c, cov, achieved)
	}
}

// TestRatioCICoverageAcrossTheGrid: with values rounded to a grid, how
// often the interval holds the truth depends on where the truth lies
// between the ratios of two grid values. Before ties were spread over
// their rounding cell, the paired interval on steps of 5 (3 % noise, a
// level per pair) covered 87-91 % for true ratios just off a grid ratio
// (0.9525 against 100/105 = 0.9524) and 99.5 % on one (the issue's own
// 5 %: 95/100), and the sweep of one true ratio (0.937) did not see it.
// Here the true ratio moves from 0.930 to 0.970 in steps of 0.0025
// (95/100 included): paired at 6, 8, 12 and 16 pairs every cell must lie
// in 93-97.5 % within its noise (as in TestRatioCICoverage), and so must
// the mean over the sweep at each number of pairs.
//
// Unpaired arms on a grid are conservative instead: spreading their ties
// over the whole cell widens them beyond the truth's spread inside it. At
// 3 v 7 and 8 v 16 runs on steps of 2 every cell must cover at least 93 %;
// their excess (up to 98.4 % on steps of 2 and 99.5 % on steps of 5 as
// coarse as the noise) is the price of never covering less, and the statistics
// guide says so. The 88.5 % at 2 pairs came from a t-interval: 2 pairs
// now get no interval and no verdict (TestPairedResolution).
func TestRatioCICoverageAcrossTheGrid(t *testing.T) {
	skipUnderRace(t)
	const trials = 3000
	var ratios []float64
	for k := 0; k <= 16; k++ {
		ratios = append(ratios, 0.93+0.0025*float64(k))
	}
	steps5 := condition{name: "paired, steps of 5", step: 5, level: 0.03}
	var paired, unpaired []coverageCell
	for _, n := range []int{6, 8, 12, 16} {
		for _, r := range ratios {
			paired = append(paired, coverageCell{steps5, n, n, r})
		}
	}
	for _, sz := range [][2]int{{3, 7}, {8, 16}} {
		for _, r := range ratios {
			unpaired = append(unpaired, coverageCell{condition{name: "unpaired, steps of 2", step: 2}, sz[0], sz[1], r})
		}
	}
	level := 0.01 / float64(len(paired)+len(unpaired)+4)
	least, most := coverageBounds(trials, level)
	pooledLeast, pooledMost := coverageBounds(trials*len(ratios), level)
	t.Logf("bounds: %d to %d of %d a cell; the mean over %d ratios %.4f to %.4f", least, most, trials, len(ratios),
		float64(pooledLeast)/float64(trials*len(ratios)), float64(pooledMost)/float64(trials*len(ratios)))
	sums := map[int]int{}
	var pairedCov, unpairedCov []int
	for _, c := range paired {
		covered, _ := simulateCoverage(t, c, trials, 12)
		pairedCov = append(pairedCov, covered)
		sums[c.na] += covered
		if covered < least || covered > most {
			t.Errorf("%s: coverage %.3f, outside 93-97.5 %% beyond the simulation's noise (%d to %d of %d)",
				c, float64(covered)/trials, least, most, trials)
		}
	}
	for n, sum := range sums {
		if sum < pooledLeast || sum > pooledMost {
			t.Errorf("paired, steps of 5, %d pairs: mean coverage over the grid %.4f, outside 93-97.5 %%", n, float64(sum)/float64(trials*len(ratios)))
		}
	}
	for _, c := range unpaired {
		covered, _ := simulateCoverage(t, c, trials, 12)
		unpairedCov = append(unpairedCov, covered)
		if covered < least {
			t.Errorf("%s: coverage %.3f, below 93 %% beyond the simulation's noise (%d of %d)", c, float64(covered)/trials, least, trials)
		}
	}
	for _, line := range append(gridSummary(paired, pairedCov, trials), gridSummary(unpaired, unpairedCov, trials)...) {
		t.Log(line)
	}
}

// gridSummary is the least, mean and most coverage over the true ratios,
// for each size of arms, and where the least and most were.
func gridSummary(cells []coverageCell, covered []int, trials int) []string {
	type acc struct {
		lo, hi, sum   float64
		atLo, atHi    float64
		count, na, nb int
		name          string
	}
	var order []string
	by := map[string]*acc{}
	for i, c := range cells {
		key := fmt.Sprintf("%s, %d v %d", c.cd.name, c.na, c.nb)
		a, ok := by[key]
		if !ok {
			a = &acc{lo: 2, hi: -1, name: key}
			by[key] = a
			order = append(order, key)
		}
		x := float64(covered[i]) / float64(trials)
		if x < a.lo {
			a.lo, a.atLo = x, c.ratio
		}
		if x > a.hi {
			a.hi, a.atHi = x, c.ratio
		}
		a.sum += x
		a.count++
	}
	var out []string
	for _, key := range order {
		a := by[key]
		out = append(out, fmt.Sprintf("%s: coverage over the grid %.3f (at %.4f) to %.3f (at %.4f), mean %.3f",
			a.name, a.lo, a.atLo, a.hi, a.atHi, a.sum/float64(a.count)))
	}
	return out
}
