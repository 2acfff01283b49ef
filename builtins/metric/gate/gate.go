// Package gate holds benchbook's regression gates as a library, beside
// package stats. x/perf keeps benchmath beside cmd/benchstat the same way.
//
// A gate pairs a comparison of this run with the same comparison in an
// earlier JSON record (by cell and global name, or by cell and metric for
// a comparison that is only displayed) and compares their runs with the
// statistics of compare (issue 32): when both comparisons are paired, the
// pair ratios B_i/A_i of this record against the baseline's, so that the A
// arm measured in the same run takes out what the box did to both arms
// that day; otherwise the B runs of each. The estimate is the ratio now /
// then (Hodges-Lehmann, unpaired) with its Moses interval, and the gate
// calls REGRESSION only when that whole interval lies beyond the tolerance
// in the bad direction: a rerun of the same state, whose interval holds 1,
// never trips it; a change the runs cannot tell from noise is said to be
// undecided, not a regression.
//
// Before, the gate compared B's point estimate with a fixed 5 %: a rerun of
// one state moved DB CPU -9.8 % (passed) while a change that moved it
// +6.5 % inside that noise was called REGRESSION.
//
// The package reads JSON and does arithmetic; flags, printing and the
// record's warnings belong to the command that uses it.
package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/builtins/metric/stats"
)

// Figure is one comparison's runs, as a record keeps them.
type Figure struct {
	Cell   string
	Name   string // the global it is bound to, "" for a displayed value only
	Metric string
	Better string
	A, B   []float64 // the runs of each arm, in run order
	Paired bool      // run i of each arm is pair i
}

// ID pairs a comparison with its baseline.
func (m Figure) ID() string {
	if m.Name != "" {
		return m.Cell + "/" + m.Name
	}
	return m.Cell + "/" + m.Metric
}

// values are what a gate compares: the pair ratios of a paired comparison
// (B_i / A_i, the box of the day divided out), else the B runs.
func (m Figure) values(pairs bool) []float64 {
	if !pairs {
		return m.B
	}
	out := make([]float64, len(m.B))
	for i := range m.B {
		out[i] = m.B[i] / m.A[i]
	}
	return out
}

// Result is one gate's outcome.
type Result struct {
	Figure
	// Basis says what was compared: "B/A pair ratios, 6 now v 6 then" or
	// "B runs, 4 now v 4 then".
	Basis string
	// Ratio is now / then (the B/A ratio of this record over the
	// baseline's, or B's runs), with its interval; ChangePct is
	// (Ratio - 1) × 100.
	Ratio, Low, High, ChangePct float64
	Shown                       stats.Shown // the index (then = 100) and its interval as printed
	Confidence                  float64     // of the interval: 1 - alpha
	// Failed: the whole interval lies beyond the tolerance in the bad
	// direction. Undecided: no interval (too few runs) or one that reaches
	// past the tolerance without lying beyond it; the gate passes, and says
	// the runs cannot tell.
	Failed, Undecided bool
	Why               string // for Undecided: why the runs cannot tell
}

// FromJSON reads a comparison's runs from its JSON form (a decoded object
// with "metric", "better", "a", "b" and "paired").
func FromJSON(cell, name string, v any) (Figure, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return Figure{}, false
	}
	g := Figure{Cell: cell, Name: name}
	g.Metric, _ = m["metric"].(string)
	g.Better, _ = m["better"].(string)
	g.Paired, _ = m["paired"].(bool)
	g.A, g.B = floats(m["a"]), floats(m["b"])
	return g, g.Metric != ""
}

func floats(v any) []float64 {
	xs, _ := v.([]any)
	var out []float64
	for _, x := range xs {
		f, ok := x.(float64)
		if !ok {
			return nil // a run without a figure (null): not gatable
		}
		out = append(out, f)
	}
	return out
}

// MergeShown adds the displayed comparisons that are not a named one shown
// again (same cell, metric and runs) to the named ones.
func MergeShown(named, shown []Figure) []Figure {
	out := named
	for _, s := range shown {
		dup := slices.ContainsFunc(named, func(n Figure) bool {
			return n.Cell == s.Cell && n.Metric == s.Metric && slices.Equal(n.A, s.A) && slices.Equal(n.B, s.B)
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
	case len(o.B) == 0:
		return "the baseline keeps no runs of it (a record made before gates compared runs: record the baseline again)"
	case len(m.B) == 0:
		return "this run's comparison has no runs"
	case o.Metric != m.Metric || o.Better != m.Better:
		return fmt.Sprintf("the baseline's is %s (%s is better)", o.Metric, o.Better)
	case stats.Check("the baseline's runs", o.B) != nil || stats.Check("this run's runs", m.B) != nil:
		return "a run's figure is 0, negative or not a number: no ratio"
	}
	return ""
}

// Compare gates each metric of now that old can gate, sorted by ID: the
// runs of now against old's, at the confidence 1 - alpha, with a tolerance
// of limit percent.
func Compare(now []Figure, old map[string]Figure, limit, alpha float64) []Result {
	var out []Result
	for _, m := range now {
		if WhyNot(m, old) != "" {
			continue
		}
		out = append(out, gateOne(m, old[m.ID()], limit, alpha))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

func gateOne(now, then Figure, limit, alpha float64) Result {
	pairs := now.Paired && then.Paired && len(now.A) == len(now.B) && len(then.A) == len(then.B) &&
		stats.Check("A", now.A) == nil && stats.Check("A", then.A) == nil
	r := Result{Figure: now, Basis: fmt.Sprintf("B runs, %d now v %d then", len(now.B), len(then.B)), Confidence: 1 - alpha,
		Ratio: math.NaN(), Low: math.NaN(), High: math.NaN(), ChangePct: math.NaN()}
	if pairs {
		r.Basis = fmt.Sprintf("B/A pair ratios, %d now v %d then (each run's A arm takes out the box of its day)", len(now.B), len(then.B))
	}
	c, err := stats.Compare(then.values(pairs), now.values(pairs), stats.Options{
		Metric: now.Metric, Better: now.Better, ALabel: "then", BLabel: "now", Alpha: alpha, Design: "unpaired"})
	if err != nil {
		r.Undecided, r.Why = true, err.Error()
		return r
	}
	r.Ratio, r.Low, r.High, r.ChangePct, r.Shown = c.Ratio, c.CI.Low, c.CI.High, c.GainPct, c.Shown()
	tol := limit / 100
	switch {
	case !c.CI.Ok():
		r.Undecided, r.Why = true, c.CI.None
	case now.Better == "higher" && r.High < 1-tol, now.Better == "lower" && r.Low > 1+tol:
		r.Failed = true
	case now.Better == "higher" && r.Low < 1-tol, now.Better == "lower" && r.High > 1+tol:
		r.Undecided, r.Why = true, fmt.Sprintf("the interval reaches past the %g %% tolerance without lying beyond it", limit)
	}
	return r
}

// Line is the gate in words, with its interval.
func (r Result) Line(limit float64) string {
	verdict := fmt.Sprintf("ok: no regression beyond the %g %% tolerance", limit)
	switch {
	case r.Failed:
		verdict = fmt.Sprintf("REGRESSION: the whole interval lies beyond the %g %% tolerance", limit)
	case r.Undecided:
		verdict = "undecided, not called a regression: " + r.Why
	}
	index, ci := r.Shown.Index, "no interval"
	if index == "" {
		index = "?"
	}
	if r.Shown.Low != "" {
		ci = fmt.Sprintf("%.0f %% CI %s to %s", 100*r.Confidence, r.Shown.Low, r.Shown.High)
	}
	return fmt.Sprintf("gate %s: %s (%s is better): then 100 -> now %s (%s), %+.1f %%, on the %s: %s",
		r.ID(), r.Metric, r.Better, index, ci, r.ChangePct, r.Basis, verdict)
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

// jsonProblem says where in data, and what, encoding/json found wrong:
// "not a JSON record" alone left a user to search a file of megabytes.
func jsonProblem(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		msg := syn.Error()
		switch {
		case strings.HasSuffix(msg, "exceeded max depth"):
			msg = "nested more than 10000 levels (encoding/json's bound)"
		case msg == "unexpected end of JSON input":
			return at(data, len(data)) + msg
		case strings.Contains(msg, "invalid character 'N'") || strings.Contains(msg, "invalid character 'I'"):
			msg += " (NaN and Infinity are not JSON)"
		}
		return at(data, int(syn.Offset)-1) + msg
	case errors.As(err, &typ):
		return fmt.Sprintf("%s%s: a %s where %s belongs", at(data, int(typ.Offset)-1), typ.Field, typ.Value, jsonKind(typ.Type.Kind()))
	}
	return err.Error()
}

// at is "line L, column C: " for byte offset off of data (columns count
// bytes, from 1).
func at(data []byte, off int) string {
	off = max(0, min(off, len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("line %d, column %d: ", line, col)
}

// jsonKind names what JSON value a Go kind decodes from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a number"
}

// ParseBaseline reads a JSON record (benchbook run -format json).
func ParseBaseline(data []byte) (Baseline, error) {
	var v recordView
	if err := json.Unmarshal(data, &v); err != nil {
		return Baseline{}, fmt.Errorf("not a JSON record (write one with -format json): %s", jsonProblem(data, err))
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
