// Package stats compares two arms of an experiment, B against A, on one
// metric. It holds no Starlark: it is what compare() computes, as a library
// (x/perf's benchmath beside cmd/benchstat). Plain Go on float64 slices, so
// every figure can be checked against an oracle: enumeration for the exact
// tests, simulation with known truth for coverage, power and false verdicts
// (sim_test.go).
//
// One estimator, one interval and one test, from one rank method, so the
// three agree: the interval is the set of ratios the test does not reject,
// and it holds the estimate.
//
//  1. Check: every value finite and above 0 (a ratio is taken), else an
//     error naming the arm and run.
//  2. Design: paired when the arms are pairs (as abab makes them: pair i =
//     run i of each, measured back to back); unpaired otherwise.
//  3. Paired: on the log pair ratios d_i = log(B_i / A_i), where a drift
//     shared by the two runs of a pair cancels, the Wilcoxon signed-rank
//     test (exact, ties and zero pairs conditioned on: SignedRank), the
//     Hodges-Lehmann estimate (the median of the Walsh averages) and the
//     signed-rank interval (the Walsh averages' order statistics; with ties,
//     the inverted test). One outlier moves one rank, not the interval.
//     6 pairs are the fewest that can reach p <= 0.05 (2/2^n).
//  4. Unpaired: on the logs of the runs, the exact Mann-Whitney test
//     (MannWhitney), the two-sample Hodges-Lehmann estimate (the median of
//     the pairwise differences) and its Moses interval.
//  5. Resolution: values that come in coarse steps (rounded latencies,
//     counts that vary) have each arm's ties spread over their rounding
//     cell before the interval is made (spreadTies, and for pairs
//     spreadTiesAlong, in the order the partners' readings say: on the
//     grid values themselves the interval snaps to ratios of grid values),
//     and the interval is widened by what rounding could hide
//     (widenForResolution), so identical runs never give a zero-width one.
//     A step is inferred only from a grid the data show (Resolution: two
//     runs of an arm one step apart), never from values that are merely
//     round (exact counts); a notebook declares one otherwise
//     (Options.Resolution).
//  6. The verdict: IMPROVES or WORSENS when p <= alpha, the interval
//     excludes 1 and (when set) the gain reaches MinEffect; else "~" with
//     every unmet condition in words. The index (100 × the estimate) and
//     the interval are shown in the same units, rounded so the shown index
//     lies inside the shown interval (ShowIndex).
//  7. The seeds' acceptance rule, beside the verdict and never in its
//     place: every B run beats every A run and the gain exceeds the spread
//     of the A runs (of the A-A control when one ran).
//
// Holm adjusts the p of a notebook's secondary comparisons (multiplicity).
package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Options say how to compare. Better is required; the rest have defaults.
type Options struct {
	Metric string // the metric's name, for the words; "metric" when empty
	Better string // "higher" or "lower"
	ALabel string // the baseline arm, "A" when empty
	BLabel string // the candidate arm, "B" when empty
	// Alpha is the p at or below which a difference counts; 0 means
	// DefaultAlpha.
	Alpha float64
	// MinEffect is the smallest gain worth a verdict, as a fraction of A
	// (0.02 = 2 %); 0 means any gain the tests support.
	MinEffect float64
	// Control holds the runs of an A-A control, when one ran: their spread
	// is what the acceptance rule judges the gain against.
	Control []float64
	// Design is "paired" (run i of each arm is pair i), "unpaired", or ""
	// for paired exactly when the arms have as many runs.
	Design string
	// Resolution is the step the values were rounded to (5 for latencies
	// rounded to 5 ms), when the notebook knows it; 0 infers it from the
	// data, which show one only when two runs of an arm lie one step apart
	// (Resolution): otherwise they are taken as exact.
	Resolution float64
}

// Confidence of every interval; DefaultAlpha as benchstat's.
const (
	Confidence   = 0.95
	DefaultAlpha = 0.05
)

// Comparison is B against A on one metric. Figures that cannot be had are
// NaN.
type Comparison struct {
	Metric, Better, ALabel, BLabel string
	A, B                           []float64 // the runs, in run order
	Paired                         bool      // run i of each arm is pair i: tested as pairs

	MeanA, MeanB       float64    // arithmetic means, for the table
	GeoMeanA, GeoMeanB float64    // geometric means, whose ratio is the estimate
	MedianA, MedianB   float64    // medians
	MedianCIA          [2]float64 // order-statistic 95 % interval of A's median, as benchstat's
	MedianCIB          [2]float64
	MinA, MaxA         float64
	MinB, MaxB         float64

	// Ratio is the estimate of B/A: the Hodges-Lehmann estimate on the log
	// scale (paired: the median of the Walsh averages of the log pair
	// ratios; unpaired: the median of the pairwise log differences). The
	// index is 100 × Ratio, shown only as Shown rounds it; GainPct is
	// (Ratio - 1) × 100, signed as measured.
	Ratio   float64
	GainPct float64
	Ratios  []float64 // B_i / A_i per pair, when paired
	CI      Interval  // of Ratio, at 1 - Alpha: the ratios the test does not reject

	// Test names the test PValue comes from: "Wilcoxon signed-rank"
	// (paired) or "Mann-Whitney" (unpaired), both exact, ties included.
	Test      string
	PValue    float64 // two-sided
	Alpha     float64
	MinEffect float64 // fraction; 0 when not set
	Verdict   string  // "IMPROVES", "WORSENS" or "~"
	Reason    string  // why the verdict is "~", in words; "" otherwise

	// The seeds' rule. EveryBBeatsEveryA: every B run is better than every
	// A run in the metric's direction (a tie is no win); EveryABeatsEveryB
	// the other way round. Chance is the probability of "every B above
	// every A" when the arms do not differ, 1 / C(nA+nB, nB).
	EveryBBeatsEveryA bool
	EveryABeatsEveryB bool
	Chance            float64
	AASpreadPct       float64 // (max - min) / mean of the A-A control, else of the A runs
	AASource          string  // "control" or "A runs"
	// Accepted: every B beats every A and the gain exceeds the spread.
	// Acceptance says so, or what is missing, in words.
	Accepted   bool
	Acceptance string

	Warnings []string
}

// Compare compares b against a. It refuses values a ratio cannot be taken
// of and an unknown direction; everything else is a verdict, "~" when the
// data do not support one.
func Compare(a, b []float64, o Options) (*Comparison, error) {
	c := &Comparison{Metric: or(o.Metric, "metric"), Better: o.Better,
		ALabel: or(o.ALabel, "A"), BLabel: or(o.BLabel, "B"),
		A: a, B: b, Alpha: o.Alpha, MinEffect: o.MinEffect}
	if c.Better != "higher" && c.Better != "lower" {
		return nil, fmt.Errorf("better must be \"higher\" or \"lower\", got %q", c.Better)
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if !(c.Alpha > 0 && c.Alpha < 0.5) {
		return nil, fmt.Errorf("alpha must be between 0 and 0.5, got %g", c.Alpha)
	}
	if !(o.MinEffect >= 0 && o.MinEffect < 1) {
		return nil, fmt.Errorf("min_effect must be a fraction from 0 to below 1 (0.02 = 2 %%), got %g", o.MinEffect)
	}
	if err := Check(c.ALabel, a); err != nil {
		return nil, err
	}
	if err := Check(c.BLabel, b); err != nil {
		return nil, err
	}
	if len(o.Control) > 0 {
		if err := Check("the A-A control", o.Control); err != nil {
			return nil, err
		}
	}
	if err := c.setDesign(o.Design); err != nil {
		return nil, err
	}
	if !(o.Resolution >= 0 && !math.IsInf(o.Resolution, 1)) {
		return nil, fmt.Errorf("resolution must be a step of 0 or more (0: inferred from the data), got %g", o.Resolution)
	}
	c.describe()
	c.estimate(o.Resolution)
	c.setBeats()
	c.setSpread(o.Control)
	c.decide()
	c.accept()
	return c, nil
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// describe fills the arms' plain figures.
func (c *Comparison) describe() {
	c.MeanA, c.MeanB = Mean(c.A), Mean(c.B)
	c.GeoMeanA, c.GeoMeanB = GeoMean(c.A), GeoMean(c.B)
	c.MinA, c.MaxA = slices.Min(c.A), slices.Max(c.A)
	c.MinB, c.MaxB = slices.Min(c.B), slices.Max(c.B)
	var lo, hi float64
	c.MedianA, lo, hi = MedianCI(c.A, Confidence)
	c.MedianCIA = [2]float64{lo, hi}
	c.MedianB, lo, hi = MedianCI(c.B, Confidence)
	c.MedianCIB = [2]float64{lo, hi}
	c.Chance = ChanceAllAbove(len(c.A), len(c.B))
}

func (c *Comparison) setDesign(design string) error {
	switch design {
	case "":
		c.Paired = len(c.A) == len(c.B)
	case "paired":
		if len(c.A) != len(c.B) {
			return fmt.Errorf("paired arms need as many runs each, got %d %s and %d %s runs", len(c.A), c.ALabel, len(c.B), c.BLabel)
		}
		c.Paired = true
	case "unpaired":
	default:
		return fmt.Errorf("design must be \"paired\" or \"unpaired\", got %q", design)
	}
	return nil
}

// estimate sets the estimate, its interval and p, from one method: the
// signed-rank family for pairs, the Mann-Whitney family otherwise.
func (c *Comparison) estimate(declared float64) {
	step := declared
	if step == 0 {
		step = Resolution(c.A, c.B)
		if w := roundButExact(c.A, c.B); w != "" {
			c.warn("%s", w)
		}
	}
	if c.Paired {
		for i := range c.A {
			c.Ratios = append(c.Ratios, c.B[i]/c.A[i])
		}
		c.Test, c.PValue = "Wilcoxon signed-rank", SignedRank(logRatios(c.A, c.B))
	} else {
		c.Test, c.PValue = "Mann-Whitney", MannWhitney(c.A, c.B)
	}
	e := ratioInterval(c.A, c.B, c.Paired, c.Confidence(), step)
	c.Ratio, c.CI = e.ratio, e.interval
	c.GainPct = (c.Ratio - 1) * 100
}

func (c *Comparison) setBeats() {
	if c.Better == "lower" {
		c.EveryBBeatsEveryA = c.MaxB < c.MinA
		c.EveryABeatsEveryB = c.MaxA < c.MinB
	} else {
		c.EveryBBeatsEveryA = c.MinB > c.MaxA
		c.EveryABeatsEveryB = c.MinA > c.MaxB
	}
}

func (c *Comparison) setSpread(control []float64) {
	if len(control) >= 2 {
		c.AASpreadPct, c.AASource = SpreadPct(control), "control"
		return
	}
	c.AASpreadPct, c.AASource = SpreadPct(c.A), "A runs"
}

// SpreadName is what the spread is of, in words: an A-A spread only when
// an A-A control ran.
func (c *Comparison) SpreadName() string {
	if c.AASource == "control" {
		return "A-A spread"
	}
	return "spread of the " + c.ALabel + " runs"
}

// decide applies the statistical rule: p <= alpha, an interval that
// excludes 1, and the minimum effect. Every condition that fails becomes
// part of the reason.
func (c *Comparison) decide() {
	var reasons []string
	pr := c.pReason()
	if pr != "" {
		reasons = append(reasons, pr)
	}
	tooFew := strings.Contains(pr, "cannot reach") // then there is no interval for the same reason
	switch {
	case !c.CI.Ok() && tooFew:
	case !c.CI.Ok():
		reasons = append(reasons, "no interval: "+c.CI.None)
	case !c.CI.Excludes(1):
		r := fmt.Sprintf("the %.0f %% CI of the index, %s, includes 100", 100*c.Confidence(), c.RatioRange())
		if c.CI.Widened != "" {
			r += " (" + c.CI.Widened + ")"
		}
		reasons = append(reasons, r)
	}
	if c.MinEffect > 0 && math.Abs(c.Ratio-1) < c.MinEffect {
		reasons = append(reasons, fmt.Sprintf("the gain %+.1f %% is smaller than min_effect %g %%", c.GainPct, 100*c.MinEffect))
	}
	c.Verdict, c.Reason = "~", strings.Join(reasons, "; ")
	if len(reasons) > 0 {
		return
	}
	if (c.Ratio > 1) == (c.Better == "higher") {
		c.Verdict = "IMPROVES"
	} else {
		c.Verdict = "WORSENS"
	}
}

// pReason says why p does not reach alpha, "" when it does: either the
// samples are too small for any arrangement to reach it, or p is too big.
func (c *Comparison) pReason() string {
	if c.PValue <= c.Alpha {
		return ""
	}
	na, nb := len(c.A), len(c.B)
	if c.Paired {
		fewest := MinPairs(c.Alpha)
		if moving := c.nonzeroPairs(); moving < fewest {
			what := fmt.Sprintf("%d pair(s)", na)
			if moving < na {
				what = fmt.Sprintf("%d pair(s) that differ (%d of %d measured the same in both arms)", moving, na-moving, na)
			}
			return fmt.Sprintf("%s cannot reach p ≤ %g with the paired test: %d pairs are the fewest that can", what, c.Alpha, fewest)
		}
		return fmt.Sprintf("p = %s > alpha %g", Num(c.PValue), c.Alpha)
	}
	if MinP(na, nb) <= c.Alpha {
		return fmt.Sprintf("p = %s > alpha %g", Num(c.PValue), c.Alpha)
	}
	return fmt.Sprintf("%d %s and %d %s runs cannot reach p ≤ %g (the smallest p they can give is %.3g)",
		na, c.ALabel, nb, c.BLabel, c.Alpha, MinP(na, nb))
}

// SmallestP is the smallest p the comparison's design can give: 2/2^n for
// n pairs that differ, 2 / C(nA + nB, nA) for unpaired arms. A p adjusted
// for m comparisons is at least m times it.
func (c *Comparison) SmallestP() float64 {
	if c.Paired {
		return math.Min(1, math.Pow(2, float64(1-c.nonzeroPairs())))
	}
	return MinP(len(c.A), len(c.B))
}

// Runs names the comparison's runs, for the record's words: "6 pairs" or
// "4 A and 8 B runs".
func (c *Comparison) Runs() string {
	if c.Paired {
		return fmt.Sprintf("%d pairs", len(c.A))
	}
	return fmt.Sprintf("%d %s and %d %s runs", len(c.A), c.ALabel, len(c.B), c.BLabel)
}

// nonzeroPairs counts the pairs whose two runs differ: a pair that measured
// the same in both arms carries no sign.
func (c *Comparison) nonzeroPairs() int {
	n := 0
	for i := range c.A {
		if c.A[i] != c.B[i] {
			n++
		}
	}
	return n
}

// accept applies the seeds' rule and words it. It decides nothing about
// the verdict: a notebook may require it for "kept".
func (c *Comparison) accept() {
	var missing []string
	if !c.EveryBBeatsEveryA {
		missing = append(missing, fmt.Sprintf("%d of %d %s runs beat every %s run", c.CountBeating(), len(c.B), c.BLabel, c.ALabel))
	}
	gain := c.gainInDirection()
	switch {
	case math.IsNaN(c.AASpreadPct):
		missing = append(missing, fmt.Sprintf("one %s run and no A-A control: no spread to judge the gain against", c.ALabel))
	case gain <= c.AASpreadPct:
		missing = append(missing, fmt.Sprintf("the gain %+.1f %% is within the %s (%s)", c.GainPct, c.SpreadName(), Pct(c.AASpreadPct)))
	}
	c.Accepted = len(missing) == 0
	if c.Accepted {
		c.Acceptance = fmt.Sprintf("accepted: every %s run beat every %s run and the gain %+.1f %% exceeds the %s (%s)",
			c.BLabel, c.ALabel, c.GainPct, c.SpreadName(), Pct(c.AASpreadPct))
	} else {
		c.Acceptance = "not accepted: " + strings.Join(missing, "; ")
	}
	if (c.EveryBBeatsEveryA || c.EveryABeatsEveryB) && c.PValue > c.Alpha {
		c.warn("with identical arms every %s run lands above every %s run by chance 1 time in %.0f (%.0f %%), and one arm above the other, either way, 1 time in %.0f (%.0f %%)",
			c.BLabel, c.ALabel, 1/c.Chance, 100*c.Chance, 1/(2*c.Chance), 200*c.Chance)
	}
}

// gainInDirection is the gain in percent, positive when B is better.
func (c *Comparison) gainInDirection() float64 {
	if c.Better == "lower" {
		return -c.GainPct
	}
	return c.GainPct
}

func (c *Comparison) warn(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}

// CountBeating counts the B runs better than every A run.
func (c *Comparison) CountBeating() int {
	n := 0
	for _, b := range c.B {
		if (c.Better == "lower" && b < c.MinA) || (c.Better != "lower" && b > c.MaxA) {
			n++
		}
	}
	return n
}

// Confidence is the interval's: 1 - alpha, so that the interval and the
// test agree (95 % at the default alpha 0.05).
func (c *Comparison) Confidence() float64 { return 1 - c.Alpha }

// Design names the design, the estimate and the test, for the record.
func (c *Comparison) Design() string {
	if c.Paired {
		return fmt.Sprintf("paired, %d pairs: Hodges-Lehmann estimate, %s test", len(c.A), c.Test)
	}
	return fmt.Sprintf("unpaired, %d %s and %d %s runs: Hodges-Lehmann estimate, %s test", len(c.A), c.ALabel, len(c.B), c.BLabel, c.Test)
}

// Shown is the index and its interval as the record prints them, the one
// rounding every display of the index takes (the sentence, c.index, the
// JSON record, the text bars).
func (c *Comparison) Shown() Shown {
	return ShowIndex(100*c.Ratio, 100*c.CI.Low, 100*c.CI.High)
}

// Sentence is the comparison in one line of words, the way the seeds write
// results, with the acceptance rule beside the verdict.
func (c *Comparison) Sentence() string {
	s := fmt.Sprintf("%s (%s is better): %s 100 -> %s %s (%.0f %% CI %s), %s %+.1f %% (%s; p = %s; %s)",
		c.Metric, c.Better, c.ALabel, c.BLabel, c.Shown().Index, 100*c.Confidence(), c.RatioRange(), c.Verdict, c.GainPct,
		c.Design(), Num(c.PValue), c.Acceptance)
	if c.Reason != "" {
		s += ": no conclusion, " + c.Reason
	}
	return s
}

// RatioRange is the interval in index units, as shown: "118 to 124", or
// "none".
func (c *Comparison) RatioRange() string {
	if !c.CI.Ok() {
		return "none"
	}
	sh := c.Shown()
	return sh.Low + " to " + sh.High
}

// Pct formats a percentage, "unknown" for NaN.
func Pct(x float64) string {
	if math.IsNaN(x) {
		return "unknown"
	}
	return fmt.Sprintf("%.1f %%", x)
}

// Num formats a p-value or similar to 3 significant digits, "n/a" for NaN.
func Num(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", x)
}
