package metric

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/stats"
)

// Comparison is the result of compare(...): stats.Comparison (B against
// A on one metric, its verdict and the seeds' acceptance rule) as a
// Starlark value, with the runs' own warnings and the box's interference
// added, and, in a record, its place among the notebook's comparisons.
type Comparison struct {
	stats.Comparison
	// Busy says how busy the box was during the runs (foreign CPU, load,
	// steal), in one line for them all, when a run was busy or the arms
	// differed; "" otherwise. BusyRuns of BoxRuns runs with the box's
	// figures were busy (the index's busy column).
	Busy              string
	BusyRuns, BoxRuns int
	// Multiplicity, set only on the record's copy (family.go): Role is
	// "headline" (what verdict(...) rests on), "secondary", or "" for a
	// comparison alone in its notebook; a secondary's verdict is judged
	// on AdjustedP (Holm over the Family secondary comparisons) and
	// RawVerdict keeps the unadjusted one.
	Role       string
	AdjustedP  float64
	Family     int
	RawVerdict string
	// Unit is the unit of the values when they carry one: each a capacity
	// ("users", "req/s"), so the line can say "capacity 8 -> 16 users".
	Unit string
}

// compareInput is what compare gathered from its arguments.
type compareInput struct {
	metric, better, aLabel, bLabel string
	a, b, control                  []float64
	alpha, minEffect               float64 // 0 means the default
	resolution                     float64 // the values' declared step; 0 infers it
	design                         string  // "paired", "unpaired", "" (by lengths)
	box                            box
	gateBusy                       string // the load gate's busy runs, in words ("" for none)
	warnings                       []string
	unit                           string // the values' unit, when they are capacities of one
}

func newComparison(in compareInput) (*Comparison, error) {
	sc, err := stats.Compare(in.a, in.b, stats.Options{
		Metric: in.metric, Better: in.better, ALabel: in.aLabel, BLabel: in.bLabel,
		Alpha: in.alpha, MinEffect: in.minEffect, Control: in.control, Design: in.design, Resolution: in.resolution,
	})
	if err != nil {
		return nil, fmt.Errorf("compare: %s: %w", in.metric, err)
	}
	bv := in.box.warning(sc.ALabel, sc.BLabel, boxCores())
	c := &Comparison{Comparison: *sc, Busy: bv.text, BusyRuns: bv.busy, BoxRuns: bv.known, Unit: in.unit}
	c.Warnings = append(c.Warnings, in.warnings...)
	switch {
	case c.Busy != "" && in.gateBusy != "":
		c.Busy += "; the load gate " + in.gateBusy
	case in.gateBusy != "":
		c.Warnings = append(c.Warnings, "the load gate "+in.gateBusy)
	}
	if c.Busy != "" {
		c.Warnings = append(c.Warnings, c.Busy)
	}
	return c, nil
}

// Line is the comparison's sentence as the record shows it: the verdict
// line and, for a secondary comparison, the adjusted p its verdict rests
// on. The box's interference is a line of its own (Busy), shown once
// beside it, not repeated in every comparison's sentence (issue 52).
func (c *Comparison) Line() string {
	s := c.Sentence()
	if c.Unit != "" {
		s = c.UnitWords() + "; " + s
	}
	switch c.Role {
	case "headline":
		s += " [headline: the decision rests on it, at alpha " + stats.Num(c.Alpha) + "]"
	case "secondary", "family":
		if c.RawVerdict != c.Verdict {
			s += fmt.Sprintf(" [%s: %s (Holm-adjusted p = %s)]", c.Role, c.VerdictWords(), stats.Num(c.AdjustedP))
		} else {
			s += fmt.Sprintf(" [%s: Holm-adjusted p = %s over %s]", c.Role, stats.Num(c.AdjustedP), c.familyWords())
		}
	}
	return s
}

// UnitWords are the arms' medians in the values' unit, "capacity 8 -> 16
// users", for values that carry a unit; "" otherwise.
func (c *Comparison) UnitWords() string {
	if c.Unit == "" {
		return ""
	}
	return fmt.Sprintf("%s %s -> %s %s", c.Metric, g(c.MedianA), g(c.MedianB), c.Unit)
}

// Starlark attributes of a comparison.
var comparisonAttrs = []string{
	"a", "a_label", "aa_spread_pct", "acceptance", "accepted", "alpha", "b", "b_label", "better", "busy",
	"ci", "ci_method", "ci_range", "ci_ratio", "design", "every_b_beats_every_a", "gain_pct", "geomean_a", "geomean_b",
	"index", "max_a", "max_b", "mean_a", "mean_b", "median_a", "median_b", "median_ci_a",
	"median_ci_b", "metric", "min_a", "min_b", "min_effect", "p_value", "paired", "ratio", "ratios",
	"reason", "sentence", "spread_source", "test", "unit", "verdict", "warnings",
}

func (c *Comparison) String() string        { return "comparison(" + c.Line() + ")" }
func (c *Comparison) Type() string          { return "comparison" }
func (c *Comparison) Freeze()               {}
func (c *Comparison) Truth() starlark.Bool  { return true }
func (c *Comparison) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: comparison") }
func (c *Comparison) AttrNames() []string   { return comparisonAttrs }

// CompareSameType: two comparisons are equal when they hold the same
// figures and words (what they store), as two arms' answers are.
func (c *Comparison) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualStored(op, c, y.(*Comparison))
}

func (c *Comparison) Attr(name string) (starlark.Value, error) {
	if v := c.stringAttr(name); v != nil {
		return v, nil
	}
	switch name {
	case "a":
		return starval.FloatList(c.A), nil
	case "b":
		return starval.FloatList(c.B), nil
	case "ratios":
		return starval.FloatList(c.Ratios), nil
	case "index":
		return starlark.Float(c.Shown().Value()), nil
	case "every_b_beats_every_a":
		return starlark.Bool(c.EveryBBeatsEveryA), nil
	case "accepted":
		return starlark.Bool(c.Accepted), nil
	case "paired":
		return starlark.Bool(c.Paired), nil
	case "ci":
		return starlark.Tuple{floatOrNone(100 * c.CI.Low), floatOrNone(100 * c.CI.High)}, nil
	case "ci_ratio":
		return starlark.Tuple{floatOrNone(c.CI.Low), floatOrNone(c.CI.High)}, nil
	case "median_ci_a":
		return starlark.Tuple{floatOrNone(c.MedianCIA[0]), floatOrNone(c.MedianCIA[1])}, nil
	case "median_ci_b":
		return starlark.Tuple{floatOrNone(c.MedianCIB[0]), floatOrNone(c.MedianCIB[1])}, nil
	case "warnings":
		return starval.StringList(c.Warnings), nil
	}
	if f, ok := c.floatAttr(name); ok {
		return floatOrNone(f), nil
	}
	return nil, nil
}

func (c *Comparison) stringAttr(name string) starlark.Value {
	var s string
	switch name {
	case "metric":
		s = c.Metric
	case "better":
		s = c.Better
	case "a_label":
		s = c.ALabel
	case "b_label":
		s = c.BLabel
	case "acceptance":
		s = c.Acceptance
	case "design":
		s = c.Design()
	case "test":
		s = c.Test
	case "ci_range":
		s = c.RatioRange()
	case "ci_method":
		s = c.ciMethod()
	case "verdict":
		s = c.Verdict
	case "reason":
		s = c.Reason
	case "spread_source":
		s = c.AASource
	case "sentence":
		s = c.Line()
	case "busy":
		s = c.Busy
	case "unit":
		s = c.Unit
	default:
		return nil
	}
	return starlark.String(s)
}

func (c *Comparison) ciMethod() string {
	if !c.CI.Ok() {
		return "none: " + c.CI.None
	}
	m := c.CI.Method
	if !math.IsNaN(c.CI.Achieved) {
		m += fmt.Sprintf(", exact: %.1f %% confidence", 100*c.CI.Achieved)
	}
	if c.CI.Widened != "" {
		m += "; " + c.CI.Widened
	}
	return m
}

func (c *Comparison) floatAttr(name string) (float64, bool) {
	fields := map[string]float64{
		"mean_a": c.MeanA, "mean_b": c.MeanB, "gain_pct": c.GainPct, "ratio": c.Ratio,
		"geomean_a": c.GeoMeanA, "geomean_b": c.GeoMeanB, "min_effect": c.MinEffect,
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
