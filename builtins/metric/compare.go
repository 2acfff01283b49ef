package metric

import (
	"fmt"
	"math"
	"slices"

	"go.starlark.net/starlark"
)

// Comparison is the result of compare(...): arm B against arm A on one
// metric, with the acceptance rule of the method ("every B beats every A and
// the mean gain exceeds the A-A spread") applied and put into words.
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
	// every A" when the arms do not differ: 1 / C(nA+nB, nB).
	Chance      float64
	AASpreadPct float64 // (max - min) / mean of the A-A control, else of the A runs; NaN when unknown
	AASource    string  // "control" or "A runs"
	CILow       float64 // 95 % bootstrap interval of MeanB/MeanA (seeded)
	CIHigh      float64
	PValue      float64 // two-sided Mann-Whitney U
	MedianA     float64
	MedianB     float64
	MedianCIA   [2]float64 // order-statistic 95 % interval of the median, as benchstat
	MedianCIB   [2]float64
	Verdict     string // "IMPROVES", "WORSENS" or "~"
	Warnings    []string
}

// compareInput is what compare gathered from its arguments.
type compareInput struct {
	metric, better, aLabel, bLabel string
	a, b, control                  []float64
	warnings                       []string
}

const confidence = 0.95

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
	}
	c.Index = int(math.Round(100 * c.MeanB / c.MeanA))
	c.GainPct = (c.MeanB/c.MeanA - 1) * 100
	for i := range min(len(in.a), len(in.b)) {
		c.Ratios = append(c.Ratios, in.b[i]/in.a[i])
	}
	c.setBeats()
	c.setSpread(in.control)
	c.CILow, c.CIHigh = bootstrapRatioCI(in.a, in.b, confidence, 2000)
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

// decide applies the acceptance rule and adds the warnings that qualify it.
func (c *Comparison) decide() {
	pairs := min(len(c.A), len(c.B))
	c.Verdict = "~"
	if math.IsNaN(c.AASpreadPct) {
		c.warn("one %s run and no A-A control: no spread to judge the gain against, no conclusion", c.ALabel)
		return
	}
	if pairs < 4 {
		c.warn("only %d pair(s): fewer than 4", pairs)
	}
	beats := c.EveryBBeatsEveryA || c.EveryABeatsEveryB
	if beats && pairs < 4 {
		c.warn("with %d pair(s) one arm beats every run of the other by chance about 1 time in %.0f (%.0f %% each way)",
			pairs, 1/c.Chance, 100*c.Chance)
	}
	big := math.Abs(c.GainPct) > c.AASpreadPct
	if beats && !big {
		c.warn("the gain %+.1f %% is within the A-A spread %.1f %% (%s)", c.GainPct, c.AASpreadPct, c.AASource)
	}
	switch {
	case c.EveryBBeatsEveryA && big:
		c.Verdict = "IMPROVES"
	case c.EveryABeatsEveryB && big:
		c.Verdict = "WORSENS"
	}
}

func (c *Comparison) warn(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}

// Sentence is the comparison in one line of words, the way the seeds write
// results: "rps 100 -> 146 IMPROVES +46.4 % (...)".
func (c *Comparison) Sentence() string {
	rule := fmt.Sprintf("%d/%d B runs beat every A run", c.countBeating(), len(c.B))
	if c.EveryBBeatsEveryA {
		rule = "every B beat every A"
	}
	return fmt.Sprintf("%s (%s is better): %s %s -> %s %d, %s %+.1f %% (%s over %d pairs; A-A spread %s; 95 %% CI of the ratio %s; p = %s)",
		c.Metric, c.Better, c.ALabel, "100", c.BLabel, c.Index, c.Verdict, c.GainPct,
		rule, min(len(c.A), len(c.B)), pct(c.AASpreadPct), ratioRange(c.CILow, c.CIHigh), num(c.PValue))
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
	"median_ci_a", "median_ci_b", "metric", "min_a", "min_b", "p_value", "ratios", "sentence",
	"verdict", "warnings",
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
		"aa_spread_pct": c.AASpreadPct, "p_value": c.PValue,
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
