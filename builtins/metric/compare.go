package metric

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"go.starlark.net/starlark"
)

// Comparison is the result of compare(...): arm B against arm A on one
// metric. The verdict is IMPROVES or WORSENS only when the exact
// Mann-Whitney test rejects "no difference" at alpha and the seeds' rule
// holds (every B beats every A, and the mean gain exceeds the spread of the
// A runs, or of the A-A control when one ran); otherwise "~", with the
// reason in words.
type Comparison struct {
	Metric  string // metric name as shown
	Better  string // "higher" or "lower"
	ALabel  string // baseline arm, the "before" of the index
	BLabel  string // candidate arm
	A, B    []float64
	MeanA   float64
	MeanB   float64
	Index   int       // round(100 * MeanB / MeanA): before = 100
	GainPct float64   // (MeanB/MeanA - 1) * 100, signed as measured
	Ratios  []float64 // per pair B/A, pair order
	MinA    float64
	MaxA    float64
	MinB    float64
	MaxB    float64
	// EveryBBeatsEveryA is true when every B run is better than every A run
	// in the metric's direction (strictly: a tie is not a win).
	EveryBBeatsEveryA bool
	// EveryABeatsEveryB is the same rule the other way round (WORSENS).
	EveryABeatsEveryB bool
	// Chance is the probability of the rank arrangement "every B above
	// every A" when the arms do not differ: 1 / C(nA+nB, nB). Either arm
	// above the other happens twice as often.
	Chance      float64
	AASpreadPct float64 // (max - min) / mean of the A-A control, else of the A runs; NaN when unknown
	AASource    string  // "control" or "A runs"
	// CILow and CIHigh bound the typical ratio B/A at 95 %: a t-interval
	// on the logs of the per-pair ratios (see ratioCI); NaN below 2 pairs.
	CILow     float64
	CIHigh    float64
	PValue    float64 // two-sided exact Mann-Whitney U, ties included (see mannWhitney)
	Alpha     float64 // the p at or below which a difference counts
	MedianA   float64
	MedianB   float64
	MedianCIA [2]float64 // order-statistic 95 % interval of the median, as benchstat
	MedianCIB [2]float64
	Verdict   string // "IMPROVES", "WORSENS" or "~"
	Reason    string // why the verdict is "~", in words; "" otherwise
	Warnings  []string
}

// compareInput is what compare gathered from its arguments.
type compareInput struct {
	metric, better, aLabel, bLabel string
	a, b, control                  []float64
	alpha                          float64 // 0 means defaultAlpha
	warnings                       []string
}

const (
	confidence   = 0.95
	defaultAlpha = 0.05 // as benchstat
)

func newComparison(in compareInput) (*Comparison, error) {
	if len(in.a) == 0 || len(in.b) == 0 {
		return nil, fmt.Errorf("compare: need at least one value per arm, got %d for %s and %d for %s",
			len(in.a), in.aLabel, len(in.b), in.bLabel)
	}
	if m := mean(in.a); m == 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return nil, fmt.Errorf("compare: the mean of %s's %s is %g: no index (before = 100) can be made from it", in.aLabel, in.metric, m)
	}
	c := &Comparison{
		Metric: in.metric, Better: in.better, ALabel: in.aLabel, BLabel: in.bLabel,
		A: in.a, B: in.b,
		MeanA: mean(in.a), MeanB: mean(in.b),
		MinA: slices.Min(in.a), MaxA: slices.Max(in.a),
		MinB: slices.Min(in.b), MaxB: slices.Max(in.b),
		Chance: chanceAllAbove(len(in.a), len(in.b)),
		Alpha:  in.alpha,
	}
	if c.Alpha == 0 {
		c.Alpha = defaultAlpha
	}
	c.Index = int(math.Round(100 * c.MeanB / c.MeanA))
	c.GainPct = (c.MeanB/c.MeanA - 1) * 100
	for i := range min(len(in.a), len(in.b)) {
		c.Ratios = append(c.Ratios, in.b[i]/in.a[i])
	}
	c.setBeats()
	c.setSpread(in.control)
	c.CILow, c.CIHigh = ratioCI(in.a, in.b, confidence)
	c.PValue = mannWhitney(in.a, in.b)
	var lo, hi float64
	c.MedianA, lo, hi = medianCI(in.a, confidence)
	c.MedianCIA = [2]float64{lo, hi}
	c.MedianB, lo, hi = medianCI(in.b, confidence)
	c.MedianCIB = [2]float64{lo, hi}
	c.Warnings = append(c.Warnings, in.warnings...)
	c.decide()
	return c, nil
}

// displayIndex rounds an index to a whole number from 10 up and keeps two
// significant digits below, so a table shows 0.8, not 1, and 121, not
// 121.4286.
func displayIndex(x float64) float64 {
	if math.Abs(x) >= 10 || x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return math.Round(x)
	}
	scale := math.Pow(10, 1-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
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
		c.AASpreadPct, c.AASource = spreadPct(control), "control"
		return
	}
	c.AASpreadPct, c.AASource = spreadPct(c.A), "A runs"
}

// spreadName is what the spread is of, in words: an A-A spread only when
// an A-A control ran.
func (c *Comparison) spreadName() string {
	if c.AASource == "control" {
		return "A-A spread"
	}
	return "spread of the " + c.ALabel + " runs"
}

// decide applies the acceptance rule: a direction (one arm beats every run
// of the other), a gain beyond the spread, and p <= alpha. Every rule that
// fails becomes part of the reason.
func (c *Comparison) decide() {
	var reasons []string
	beats := c.EveryBBeatsEveryA || c.EveryABeatsEveryB
	if !beats {
		reasons = append(reasons, fmt.Sprintf("the arms overlap: %d of %d %s runs beat every %s run",
			c.countBeating(), len(c.B), c.BLabel, c.ALabel))
	}
	if r := c.pReason(); r != "" {
		reasons = append(reasons, r)
	}
	switch {
	case math.IsNaN(c.AASpreadPct):
		reasons = append(reasons, fmt.Sprintf("one %s run and no A-A control: no spread to judge the gain against", c.ALabel))
	case math.Abs(c.GainPct) <= c.AASpreadPct:
		reasons = append(reasons, fmt.Sprintf("the gain %+.1f %% is within the %s (%.1f %%)", c.GainPct, c.spreadName(), c.AASpreadPct))
	}
	if beats && c.PValue > c.Alpha {
		c.warn("with identical arms every %s run lands above every %s run by chance 1 time in %.0f (%.0f %%), and one arm above the other, either way, 1 time in %.0f (%.0f %%)",
			c.BLabel, c.ALabel, 1/c.Chance, 100*c.Chance, 1/(2*c.Chance), 200*c.Chance)
	}
	c.Verdict, c.Reason = "~", strings.Join(reasons, "; ")
	switch {
	case len(reasons) > 0:
	case c.EveryBBeatsEveryA:
		c.Verdict = "IMPROVES"
	case c.EveryABeatsEveryB:
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
	if minP(na, nb) <= c.Alpha {
		return fmt.Sprintf("p = %s > alpha %g", num(c.PValue), c.Alpha)
	}
	if na != nb {
		return fmt.Sprintf("%d %s and %d %s runs cannot reach p ≤ %g (the smallest p they can give is %.3g)",
			na, c.ALabel, nb, c.BLabel, c.Alpha, minP(na, nb))
	}
	fewest := na
	for minP(fewest, fewest) > c.Alpha && fewest < 1000 {
		fewest++
	}
	return fmt.Sprintf("%d pair(s) cannot reach p ≤ %g: %d pairs are the fewest that can", na, c.Alpha, fewest)
}

func (c *Comparison) warn(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}

// Sentence is the comparison in one line of words, the way the seeds write
// results: "rps 100 -> 146 IMPROVES +46.4 % (...)".
func (c *Comparison) Sentence() string {
	rule := fmt.Sprintf("%d/%d B runs beat every A run", c.countBeating(), len(c.B))
	switch {
	case c.EveryBBeatsEveryA:
		rule = "every B beat every A"
	case c.EveryABeatsEveryB:
		rule = "every A beat every B"
	}
	s := fmt.Sprintf("%s (%s is better): %s %s -> %s %d, %s %+.1f %% (%s over %d pairs; %s %s; 95 %% CI of the ratio %s; p = %s)",
		c.Metric, c.Better, c.ALabel, "100", c.BLabel, c.Index, c.Verdict, c.GainPct,
		rule, min(len(c.A), len(c.B)), c.spreadName(), pct(c.AASpreadPct), ratioRange(c.CILow, c.CIHigh), num(c.PValue))
	if c.Reason != "" {
		s += ": no conclusion, " + c.Reason
	}
	return s
}

// countBeating counts B runs better than every A run.
func (c *Comparison) countBeating() int {
	n := 0
	for _, b := range c.B {
		if (c.Better == "lower" && b < c.MinA) || (c.Better != "lower" && b > c.MaxA) {
			n++
		}
	}
	return n
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "unknown"
	}
	return fmt.Sprintf("%.1f %%", x)
}

func ratioRange(lo, hi float64) string {
	if math.IsNaN(lo) {
		return "unknown"
	}
	return fmt.Sprintf("%.3f to %.3f", lo, hi)
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", x)
}

// Starlark attributes of a comparison.
var comparisonAttrs = []string{
	"a", "a_label", "aa_spread_pct", "b", "b_label", "better", "ci", "every_b_beats_every_a",
	"gain_pct", "index", "max_a", "max_b", "mean_a", "mean_b", "median_a", "median_b",
	"median_ci_a", "median_ci_b", "metric", "min_a", "min_b", "p_value", "alpha", "ratios", "reason",
	"sentence", "spread_source", "verdict", "warnings",
}

func (c *Comparison) String() string        { return "comparison(" + c.Sentence() + ")" }
func (c *Comparison) Type() string          { return "comparison" }
func (c *Comparison) Freeze()               {}
func (c *Comparison) Truth() starlark.Bool  { return true }
func (c *Comparison) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: comparison") }
func (c *Comparison) AttrNames() []string   { return comparisonAttrs }

func (c *Comparison) Attr(name string) (starlark.Value, error) {
	switch name {
	case "metric":
		return starlark.String(c.Metric), nil
	case "better":
		return starlark.String(c.Better), nil
	case "a_label":
		return starlark.String(c.ALabel), nil
	case "b_label":
		return starlark.String(c.BLabel), nil
	case "a":
		return floatList(c.A), nil
	case "b":
		return floatList(c.B), nil
	case "ratios":
		return floatList(c.Ratios), nil
	case "index":
		return starlark.Float(displayIndex(100 * c.MeanB / c.MeanA)), nil
	case "every_b_beats_every_a":
		return starlark.Bool(c.EveryBBeatsEveryA), nil
	case "ci":
		return starlark.Tuple{floatOrNone(c.CILow), floatOrNone(c.CIHigh)}, nil
	case "median_ci_a":
		return starlark.Tuple{floatOrNone(c.MedianCIA[0]), floatOrNone(c.MedianCIA[1])}, nil
	case "median_ci_b":
		return starlark.Tuple{floatOrNone(c.MedianCIB[0]), floatOrNone(c.MedianCIB[1])}, nil
	case "verdict":
		return starlark.String(c.Verdict), nil
	case "reason":
		return starlark.String(c.Reason), nil
	case "spread_source":
		return starlark.String(c.AASource), nil
	case "sentence":
		return starlark.String(c.Sentence()), nil
	case "warnings":
		return stringList(c.Warnings), nil
	}
	if f, ok := c.floatAttr(name); ok {
		return floatOrNone(f), nil
	}
	return nil, nil
}

func (c *Comparison) floatAttr(name string) (float64, bool) {
	fields := map[string]float64{
		"mean_a": c.MeanA, "mean_b": c.MeanB, "gain_pct": c.GainPct,
		"min_a": c.MinA, "max_a": c.MaxA, "min_b": c.MinB, "max_b": c.MaxB,
		"aa_spread_pct": c.AASpreadPct, "p_value": c.PValue, "alpha": c.Alpha,
		"median_a": c.MedianA, "median_b": c.MedianB,
	}
	f, ok := fields[name]
	return f, ok
}

func floatOrNone(f float64) starlark.Value {
	if math.IsNaN(f) {
		return starlark.None
	}
	return starlark.Float(f)
}

func floatList(xs []float64) *starlark.List {
	l := make([]starlark.Value, len(xs))
	for i, x := range xs {
		l[i] = starlark.Float(x)
	}
	return starlark.NewList(l)
}

func stringList(ss []string) *starlark.List {
	l := make([]starlark.Value, len(ss))
	for i, s := range ss {
		l[i] = starlark.String(s)
	}
	return starlark.NewList(l)
}
