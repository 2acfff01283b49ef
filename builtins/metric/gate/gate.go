// Package gate holds benchbook's regression gates as a library, beside
// the statistics package (as x/perf keeps benchmath beside cmd/benchstat).
//
// A gate pairs a comparison of this run with the same comparison in an
// earlier JSON record (by cell and global name, or by cell and metric for
// a comparison that is only displayed) and fails when the B arm's typical
// figure moved in the bad direction by more than a limit in percent.
// Figures of different estimators (the geometric mean of B since issue 23,
// its arithmetic mean before) are never gated against each other.
//
// The package reads JSON and does arithmetic; flags, printing and the
// record's warnings belong to the command that uses it.
package gate

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// Figure is one comparison's headline figure.
type Figure struct {
	Cell   string
	Name   string // the global it is bound to, "" for a displayed value only
	Metric string
	Better string
	After  float64 // the B arm's typical figure
	// Estimator is "geomean" or "mean".
	Estimator string
}

// ID pairs a comparison with its baseline.
func (m Figure) ID() string {
	if m.Name != "" {
		return m.Cell + "/" + m.Name
	}
	return m.Cell + "/" + m.Metric
}

// Result is one gate's outcome.
type Result struct {
	Figure
	Old, ChangePct float64
	Failed         bool
}

// FromJSON reads a comparison's figure from its JSON form (a decoded
// object with "metric", "better" and "geomean_b" or "mean_b").
func FromJSON(cell, name string, v any) (Figure, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return Figure{}, false
	}
	g := Figure{Cell: cell, Name: name}
	g.Metric, _ = m["metric"].(string)
	g.Better, _ = m["better"].(string)
	g.After, g.Estimator = math.NaN(), "mean"
	if after, ok := m["geomean_b"].(float64); ok {
		g.After, g.Estimator = after, "geomean"
	} else if after, ok := m["mean_b"].(float64); ok {
		g.After = after
	}
	return g, g.Metric != ""
}

// MergeShown adds the displayed comparisons that are not a named one shown
// again (same cell, metric and figure) to the named ones.
func MergeShown(named, shown []Figure) []Figure {
	out := named
	for _, s := range shown {
		dup := slices.ContainsFunc(named, func(n Figure) bool {
			return n.Cell == s.Cell && n.Metric == s.Metric && n.After == s.After
		})
		if !dup {
			out = append(out, s)
		}
	}
	return out
}

// ByID indexes metrics by ID.
func ByID(ms []Figure) map[string]Figure {
	out := make(map[string]Figure, len(ms))
	for _, m := range ms {
		out[m.ID()] = m
	}
	return out
}

// WhyNot says why old cannot gate m, or "" when it can.
func WhyNot(m Figure, old map[string]Figure) string {
	o, ok := old[m.ID()]
	switch {
	case !ok:
		return "not in the baseline"
	case o.After == 0 || math.IsNaN(o.After):
		return "the baseline's figure is 0 or unknown"
	case math.IsNaN(m.After):
		return "this run's figure is unknown"
	case o.Metric != m.Metric || o.Better != m.Better:
		return fmt.Sprintf("the baseline's is %s (%s is better)", o.Metric, o.Better)
	case o.Estimator != m.Estimator:
		return fmt.Sprintf("the baseline's figure is the %s of B, this one the %s: record the baseline again", o.Estimator, m.Estimator)
	}
	return ""
}

// Compare gates each metric of now that old can gate, sorted by ID. A
// change in the bad direction larger than limit percent fails.
func Compare(now []Figure, old map[string]Figure, limit float64) []Result {
	var out []Result
	for _, m := range now {
		if WhyNot(m, old) != "" {
			continue
		}
		o := old[m.ID()]
		change := (m.After - o.After) / math.Abs(o.After) * 100
		worse := change
		if m.Better == "higher" {
			worse = -change
		}
		out = append(out, Result{Figure: m, Old: o.After, ChangePct: change, Failed: worse > limit})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// Host is the part of a record's provenance that says what kind of
// machine measured it.
type Host struct {
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
	MemBytes uint64 `json:"mem_bytes"`
	Kernel   string `json:"kernel"`
}

// HostDiff names what differs between two machines ("" when they are the
// same kind: CPU model, cores and whole GiB of memory).
func HostDiff(base, now Host) string {
	var diffs []string
	if base.CPU != now.CPU {
		diffs = append(diffs, fmt.Sprintf("CPU %q vs %q", base.CPU, now.CPU))
	}
	if base.Cores != now.Cores {
		diffs = append(diffs, fmt.Sprintf("%d vs %d cores", base.Cores, now.Cores))
	}
	if base.MemBytes>>30 != now.MemBytes>>30 {
		diffs = append(diffs, fmt.Sprintf("%d vs %d GiB", base.MemBytes>>30, now.MemBytes>>30))
	}
	return strings.Join(diffs, ", ")
}

// ParamDiff names the -p parameters that differ between two runs.
func ParamDiff(base, now map[string]string) string {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(base)) {
		if v, ok := now[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%s vs default", k, base[k]))
		} else if v != base[k] {
			diffs = append(diffs, fmt.Sprintf("%s=%s vs %s", k, base[k], v))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if _, ok := base[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s default vs %s", k, now[k]))
		}
	}
	return strings.Join(diffs, ", ")
}

// Baseline is what the gates read of an earlier JSON record.
type Baseline struct {
	Figures []Figure
	Host    Host
	Params  map[string]string
}

// jsonOutput is a value in a JSON record.
type jsonOutput struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// recordView is the part of a JSON record the gates read.
type recordView struct {
	Cells []struct {
		Name    string       `json:"name"`
		Outputs []jsonOutput `json:"outputs"`
	} `json:"cells"`
	Named []struct {
		Cell string `json:"cell"`
		Name string `json:"name"`
		jsonOutput
	} `json:"named"`
	Prov struct {
		Host   Host              `json:"host"`
		Params map[string]string `json:"params"`
	} `json:"provenance"`
}

// ParseBaseline reads a JSON record (benchbook run -format json).
func ParseBaseline(data []byte) (Baseline, error) {
	var v recordView
	if err := json.Unmarshal(data, &v); err != nil {
		return Baseline{}, fmt.Errorf("not a JSON record (write one with -format json): %v", err)
	}
	var named, shown []Figure
	for _, n := range v.Named {
		if m, ok := decode(n.Cell, n.Name, n.jsonOutput); ok {
			named = append(named, m)
		}
	}
	for _, c := range v.Cells {
		for _, o := range c.Outputs {
			if m, ok := decode(c.Name, "", o); ok {
				shown = append(shown, m)
			}
		}
	}
	return Baseline{Figures: MergeShown(named, shown), Host: v.Prov.Host, Params: v.Prov.Params}, nil
}

func decode(cell, name string, o jsonOutput) (Figure, bool) {
	if o.Type != "comparison" {
		return Figure{}, false
	}
	var v any
	if json.Unmarshal(o.Value, &v) != nil {
		return Figure{}, false
	}
	return FromJSON(cell, name, v)
}
