package metric

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/metric/stats"
)

// Comparison is the result of compare(...): stats.Comparison (B against
// A on one metric, its verdict and the seeds' acceptance rule) as a
// Starlark value, with the runs' own warnings added.
type Comparison struct {
	stats.Comparison
}

// compareInput is what compare gathered from its arguments.
type compareInput struct {
	metric, better, aLabel, bLabel string
	a, b, control                  []float64
	alpha, minEffect               float64 // 0 means the default
	warnings                       []string
}

func newComparison(in compareInput) (*Comparison, error) {
	sc, err := stats.Compare(in.a, in.b, stats.Options{
		Metric: in.metric, Better: in.better, ALabel: in.aLabel, BLabel: in.bLabel,
		Alpha: in.alpha, MinEffect: in.minEffect, Control: in.control,
	})
	if err != nil {
		return nil, fmt.Errorf("compare: %s: %w", in.metric, err)
	}
	sc.Warnings = append(sc.Warnings, in.warnings...)
	return &Comparison{*sc}, nil
}

// Starlark attributes of a comparison.
var comparisonAttrs = []string{
	"a", "a_label", "aa_spread_pct", "acceptance", "accepted", "alpha", "b", "b_label", "better",
	"ci", "ci_method", "ci_range", "design", "every_b_beats_every_a", "gain_pct", "geomean_a", "geomean_b",
	"index", "max_a", "max_b", "mean_a", "mean_b", "median_a", "median_b", "median_ci_a",
	"median_ci_b", "metric", "min_a", "min_b", "min_effect", "p_value", "paired", "ratio", "ratios",
	"reason", "sentence", "spread_source", "verdict", "warnings",
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
		return starval.FloatList(c.A), nil
	case "b":
		return starval.FloatList(c.B), nil
	case "ratios":
		return starval.FloatList(c.Ratios), nil
	case "index":
		return starlark.Float(stats.DisplayIndex(100 * c.Ratio)), nil
	case "every_b_beats_every_a":
		return starlark.Bool(c.EveryBBeatsEveryA), nil
	case "accepted":
		return starlark.Bool(c.Accepted), nil
	case "acceptance":
		return starlark.String(c.Acceptance), nil
	case "paired":
		return starlark.Bool(c.Paired), nil
	case "design":
		return starlark.String(c.Design()), nil
	case "ci":
		return starlark.Tuple{floatOrNone(c.CI.Low), floatOrNone(c.CI.High)}, nil
	case "ci_range":
		return starlark.String(c.RatioRange()), nil
	case "ci_method":
		if !c.CI.Ok() {
			return starlark.String("none: " + c.CI.None), nil
		}
		return starlark.String(c.CI.Method), nil
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
		return starval.StringList(c.Warnings), nil
	}
	if f, ok := c.floatAttr(name); ok {
		return floatOrNone(f), nil
	}
	return nil, nil
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
