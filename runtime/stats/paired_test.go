package stats

import (
	"math"
	"strings"
	"testing"
)

// The cases of issue 32's audit, each as it was reported; each failed
// before the paired rank method.

func mustCompare(t *testing.T, a, b []float64, o Options) *Comparison {
	t.Helper()
	c, err := Compare(a, b, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noisy is level·(1+drift)^i times a fixed ±2 % pattern, so a case has
// noise without a random seed.
func noisy(n int, level, drift float64, phase int) []float64 {
	pattern := []float64{1.012, 0.991, 1.019, 0.983, 1.004, 0.996, 1.021, 0.979, 1.008, 0.988, 1.015, 0.993}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = level * math.Pow(1+drift, float64(i)) * pattern[(i+phase)%len(pattern)]
	}
	return xs
}

// Case 1: a drift shared within pairs cancels. A_i = 100·1.02^i, B_i =
// 0.95·A_i, 16 pairs: the unpaired p was 0.171 and the verdict "~".
func TestPairedDriftCancels(t *testing.T) {
	var a, b []float64
	for i := range 16 {
		a = append(a, 100*math.Pow(1.02, float64(i)))
		b = append(b, 0.95*a[i])
	}
	c := mustCompare(t, a, b, Options{Better: "lower"})
	if c.Verdict != "IMPROVES" || !c.Paired || c.PValue > 1e-4 {
		t.Errorf("verdict %s, paired %v, p %g: %s", c.Verdict, c.Paired, c.PValue, c.Sentence())
	}
	if math.Abs(c.Ratio-0.95) > 1e-9 || c.Shown().Index != "95" || c.RatioRange() != "95 to 95" {
		t.Errorf("index %v (%s, CI %s), want 95 (95 to 95: noise-free runs)", 100*c.Ratio, c.Shown().Index, c.RatioRange())
	}
	// With noise on top of the drift, too.
	c = mustCompare(t, noisy(16, 100, 0.02, 0), noisy(16, 95, 0.02, 5), Options{Better: "lower"})
	if c.Verdict != "IMPROVES" {
		t.Errorf("noisy drift: %s", c.Sentence())
	}
}

// Case 2: one outlier does not block the verdict through the interval: the
// test and the interval are one method and agree, and at 16 pairs B 5 %
// lower with one B run x1.3 is found.
func TestPairedOutlierMovesOneRank(t *testing.T) {
	for _, n := range []int{8, 16} {
		a, b := noisy(n, 100, 0.01, 0), noisy(n, 95, 0.01, 3)
		b[2] *= 1.3
		c := mustCompare(t, a, b, Options{Better: "lower"})
		rejects, excludes := c.PValue <= c.Alpha, c.CI.Excludes(1)
		if rejects != excludes {
			t.Errorf("%d pairs: p = %g but the interval %s: test and interval disagree", n, c.PValue, c.RatioRange())
		}
		if n == 16 && c.Verdict != "IMPROVES" {
			t.Errorf("16 pairs with one outlier: %s", c.Sentence())
		}
		t.Logf("%d pairs: %s", n, c.Sentence())
	}
}

// Case 5: values with a coarse resolution. A = [20]*4, B = [19]*4 gave a
// zero-width interval and IMPROVES; at 8 pairs the interval now spans what
// rounding to whole units could hide (90.2 to 100), so no verdict, when
// the notebook says the values were rounded (Options.Resolution): since
// issue 47 values that are merely round, each arm within one step, are
// taken as exact counts (TestRoundNumbersAreNotRounding), and the
// record says so.
func TestPairedResolution(t *testing.T) {
	c := mustCompare(t, fill(20, 4), fill(19, 4), Options{Better: "lower"})
	if c.Verdict != "~" {
		t.Errorf("4 pairs of 20 v 19: %s", c.Sentence())
	}
	c = mustCompare(t, fill(20, 8), fill(19, 8), Options{Better: "lower", Resolution: 1})
	// True values anywhere in 19.5-20.5 and 18.5-19.5: B/A from 18.5/20.5
	// to 19.5/19.5.
	if c.Verdict != "~" || math.Abs(c.CI.Low-18.5/20.5) > 1e-9 || math.Abs(c.CI.High-1) > 1e-9 || c.CI.Step != 1 || c.CI.Widened == "" {
		t.Errorf("8 pairs of 20 v 19: [%v, %v], step %g: %s", c.CI.Low, c.CI.High, c.CI.Step, c.Sentence())
	}
	if !strings.Contains(c.Reason, "resolution") {
		t.Errorf("the reason should name the resolution: %s", c.Reason)
	}
	// The issue's own case: a 5 % effect, values rounded to steps of 5, 2
	// pairs. Its t-interval covered 88.5 %; 2 pairs now get no interval
	// and no verdict, whatever they read (coverage from 6 pairs up:
	// TestRatioCICoverageAcrossTheGrid).
	for _, pair := range [][4]float64{{100, 95, 105, 100}, {100, 95, 100, 95}, {95, 90, 110, 105}, {100, 100, 105, 100}} {
		c := mustCompare(t, []float64{pair[0], pair[2]}, []float64{pair[1], pair[3]}, Options{Better: "lower"})
		if c.CI.Ok() || c.Verdict != "~" || !strings.Contains(c.Reason, "6 pairs are the fewest") {
			t.Errorf("2 pairs on steps of 5 %v: interval %v, %s", pair, c.CI.Ok(), c.Sentence())
		}
	}
	// Spread-out values on a coarse grid keep a verdict they earn.
	a := []float64{100, 95, 105, 100, 110, 95, 100, 105, 100, 95, 105, 100}
	b := []float64{90, 85, 95, 90, 100, 85, 90, 95, 90, 85, 95, 90}
	if c := mustCompare(t, a, b, Options{Better: "lower"}); c.Verdict != "IMPROVES" {
		t.Errorf("a 10 %% gain on steps of 5: %s", c.Sentence())
	}
}

// Case 6: unequal arms get an interval and a verdict from 3 v 7 runs.
func TestPairedUnequalArms(t *testing.T) {
	a, b := noisy(3, 100, 0, 0), noisy(7, 130, 0, 3)
	c := mustCompare(t, a, b, Options{Better: "higher"})
	if c.Paired || !c.CI.Ok() || c.Verdict != "IMPROVES" {
		t.Errorf("3 v 7, a 30 %% gain: paired %v, interval %q: %s", c.Paired, c.CI.None, c.Sentence())
	}
	// 2 v 5 cannot reach 0.05 (2/21): no interval, and the reason says so.
	c = mustCompare(t, noisy(2, 100, 0, 0), noisy(5, 130, 0, 3), Options{Better: "higher"})
	if c.CI.Ok() || c.Verdict != "~" || !strings.Contains(c.Reason, "smallest p") {
		t.Errorf("2 v 5: %s", c.Sentence())
	}
}

// Case 10: the index and its interval in the same units, the shown index
// inside the shown interval: "A 100 -> B 0.19 (95 % CI 0.18 to 0.20)", not
// a ratio interval "0.001 to 0.003" beside an index.
func TestPairedIndexUnits(t *testing.T) {
	a := noisy(8, 100, 0, 0)
	b := noisy(8, 0.19, 0, 2)
	c := mustCompare(t, a, b, Options{Metric: "rps", Better: "higher"})
	sh := c.Shown()
	s := c.Sentence()
	if !strings.HasPrefix(sh.Index, "0.19") || !strings.Contains(s, "B "+sh.Index+" (95 % CI "+sh.Low+" to "+sh.High+")") || strings.Contains(s, "0.001") {
		t.Errorf("sentence %q (shown %+v)", s, sh)
	}
	for _, cs := range [][3]float64{{100.04, 99.96, 100.12}, {0.19, 0.1, 0.3}, {121.4, 118.6, 124.02}, {9.96, 9.5, 10.4}, {100, 100, 100}} {
		sh := ShowIndex(cs[0], cs[1], cs[2])
		if !shownInside(sh) || sh.Low == sh.High && cs[1] != cs[2] {
			t.Errorf("ShowIndex(%v) = %+v", cs, sh)
		}
	}
}

// fill is n runs that all read x.
func fill(x float64, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = x
	}
	return xs
}
