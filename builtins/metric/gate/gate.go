// Package gate holds benchbook's regression gates as a library, beside
// package stats. x/perf keeps benchmath beside cmd/benchstat the same way.
//
// A gate pairs a comparison of this run with the same comparison in an
// earlier JSON record (by cell and global name, or by cell and metric for
// a comparison that is only displayed) and compares their runs with the
// statistics of compare (issue 32): when both comparisons are paired, the
// pair ratios B_i/A_i of this record against the baseline's, so that the A
// arm measured in the same run takes out what the box did to both arms
// that day; when they are not, each record's B/A of its unpaired arms
// (issue 47: B's runs alone tripped on the box's noise); B's runs alone
// only without A runs. The estimate is the ratio now / then
// (Hodges-Lehmann) with its interval, and the gate calls REGRESSION only
// when that whole interval lies beyond the tolerance in the bad direction:
// a rerun of the same state, whose interval holds 1, never trips it; a
// change the runs cannot tell from noise is said to be undecided, not a
// regression, and so are arms that moved apart (the control arm moved
// beyond its noise, B alone says worse and B/A better, each beyond the
// tolerance), where the normalisation decides and cannot be checked.
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

	"github.com/benchbook/benchbook/runtime/stats"
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

// hasControl reports whether the A arm has runs a ratio can be taken of.
func (m Figure) hasControl() bool { return stats.Check("A", m.A) == nil }

// Result is one gate's outcome.
type Result struct {
	Figure
	// Basis says what was compared: "B/A pair ratios, 6 now v 6 then",
	// "B/A of unpaired arms, 4 v 8 runs now, 4 v 8 then" or "B runs
	// alone, 4 now v 4 then".
	Basis string
	// Ratio is now / then (the B/A ratio of this record over the
	// baseline's, or B's runs), with its interval; ChangePct is
	// (Ratio - 1) × 100.
	Ratio, Low, High, ChangePct float64
	Shown                       stats.Shown // the index (then = 100) and its interval as printed
	Confidence                  float64     // of the interval: 1 - alpha
	// Failed: the whole interval lies beyond the tolerance in the bad
	// direction. Undecided: no interval (too few runs), one that reaches
	// past the tolerance without lying beyond it, or arms that moved apart
	// (Control); the gate passes unless told to fail (-fail-undecided),
	// and says the runs cannot tell.
	Failed, Undecided bool
	Why               string // for Undecided: why the runs cannot tell
	// Control is what the control arm A did from the baseline to this
	// record, and BAlone what B's runs did without it, when both records
	// have A runs: the B/A normalisation takes out the box only when A
	// reacts to the box as B does.
	Control, BAlone Change
}

// Change is one arm's runs now against then: the ratio now / then (the
// two-sample Hodges-Lehmann estimate) and its interval at the gate's
// confidence, the Moses interval of the arm's runs.
type Change struct {
	Ratio, Low, High float64
	Shown            stats.Shown
	Ok               bool // there is an interval
}

// moved reports whether the arm moved beyond its runs' noise: an interval
// that excludes 1.
func (c Change) moved() bool { return c.Ok && (c.Low > 1 || c.High < 1) }

// words are the change in the record's words: "+47 % (95 % CI +30 to +60 %)".
func (c Change) words(confidence float64) string {
	if !c.Ok {
		return fmt.Sprintf("%+.0f %% (no interval)", 100*(c.Ratio-1))
	}
	return fmt.Sprintf("%+.0f %% (%.0f %% CI %+.0f to %+.0f %%)", 100*(c.Ratio-1), 100*confidence, 100*(c.Low-1), 100*(c.High-1))
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
	r := Result{Figure: now, Confidence: 1 - alpha, Ratio: math.NaN(), Low: math.NaN(), High: math.NaN(), ChangePct: math.NaN()}
	controls := now.hasControl() && then.hasControl()
	var est estimate
	switch {
	case controls && now.Paired && then.Paired && len(now.A) == len(now.B) && len(then.A) == len(then.B):
		r.Basis = fmt.Sprintf("B/A pair ratios, %d now v %d then (each record's A arm takes out the box of its day)", len(now.B), len(then.B))
		est = change(then.values(true), now.values(true), now.Better, alpha)
	case controls:
		r.Basis = fmt.Sprintf("B/A of unpaired arms, %d v %d runs now, %d v %d then (each record's A arm takes out the box of its day)",
			len(now.A), len(now.B), len(then.A), len(then.B))
		est = unpairedRatio(now, then, alpha)
	default:
		r.Basis = fmt.Sprintf("B runs alone, %d now v %d then (no A runs to take out the box of the day)", len(now.B), len(then.B))
		est = change(then.B, now.B, now.Better, alpha)
	}
	if controls {
		r.Control = change(then.A, now.A, now.Better, alpha).Change
		r.BAlone = change(then.B, now.B, now.Better, alpha).Change
	}
	if est.why != "" {
		r.Undecided, r.Why = true, est.why
		return r
	}
	r.Ratio, r.Low, r.High, r.Shown = est.Ratio, est.Low, est.High, est.Shown
	r.ChangePct = (r.Ratio - 1) * 100
	tol := limit / 100
	switch {
	case !est.Ok:
		r.Undecided, r.Why = true, est.none
	case worse(now.Better, r.Low, r.High, tol):
		r.Failed = true
	case reaches(now.Better, r.Low, r.High, tol):
		r.Undecided, r.Why = true, fmt.Sprintf("the interval reaches past the %g %% tolerance without lying beyond it", limit)
	case r.apart(tol):
		r.Undecided, r.Why = true, fmt.Sprintf("the arms moved apart: B alone lies beyond the %g %% tolerance while B/A says better; "+
			"B/A takes out the box only when the control arm reacts to it as B does", limit)
	}
	return r
}

// worse reports whether the whole interval [lo, hi] of now/then lies
// beyond the tolerance in the bad direction; reaches whether part of it
// does.
func worse(better string, lo, hi, tol float64) bool {
	if better == "higher" {
		return hi < 1-tol
	}
	return lo > 1+tol
}

func reaches(better string, lo, hi, tol float64) bool {
	if better == "higher" {
		return lo < 1-tol
	}
	return hi > 1+tol
}

// apart reports whether the arms moved apart between the records (issue
// 47: a 21 % regression passed when the control arm's CPU per request
// rose 47 % on a busier box and B's less): the control arm moved beyond
// its runs' noise, B alone lies wholly beyond the tolerance in the bad
// direction, and B/A says better by more than the tolerance. The two
// readings then disagree beyond the tolerance both ways, the
// normalisation is what hides or finds the regression, and the runs
// cannot tell which. Arms that moved alike (a box slower for both) leave
// B/A where it was, and the gate as it was.
func (r Result) apart(tol float64) bool {
	better := r.Better == "higher" && r.Ratio > 1+tol || r.Better == "lower" && r.Ratio < 1-tol
	return r.Control.moved() && r.BAlone.Ok && worse(r.Better, r.BAlone.Low, r.BAlone.High, tol) && better
}

// estimate is a gate's estimate of now / then, or why there is none.
type estimate struct {
	Change
	se   float64 // of the log ratio, from the interval's width; NaN without one
	none string  // no interval: why
	why  string  // no estimate at all: why
}

// change compares the runs now with the runs then (or B with A), unpaired,
// at 1 - alpha.
func change(then, now []float64, better string, alpha float64) estimate {
	c, err := stats.Compare(then, now, stats.Options{Better: better, ALabel: "then", BLabel: "now", Alpha: alpha, Design: "unpaired"})
	if err != nil {
		return estimate{why: err.Error()}
	}
	e := estimate{Change: Change{Ratio: c.Ratio, Low: c.CI.Low, High: c.CI.High, Shown: c.Shown(), Ok: c.CI.Ok()}, se: math.NaN(), none: c.CI.None}
	if e.Ok {
		conf := c.CI.Achieved
		if math.IsNaN(conf) {
			conf = c.Confidence()
		}
		e.se = math.Log(c.CI.High/c.CI.Low) / (2 * math.Sqrt2 * math.Erfinv(conf))
	}
	return e
}

// unpairedRatio is now's B/A over then's B/A for arms that are not pairs.
// Each record's B/A is the two-sample Hodges-Lehmann estimate of B against
// A with its Moses interval (compare's, at 1 - alpha); on the log scale
// the quotient's estimate is the difference of theirs, and its standard
// error the root sum of squares of theirs, each read off its interval's
// width at the confidence it achieves (the records are independent), so
// the interval is the estimate ± z(1 - alpha/2) of it. Requiring both
// records' intervals to hold the truth at once (Bonferroni) made it a
// third wider and left almost every gate of 4 v 8 runs undecided. Before
// issue 47 such a comparison was gated on its B runs alone, and a rerun
// of the same state on a box 10 % slower tripped REGRESSION in 11-21 % of
// reruns.
func unpairedRatio(now, then Figure, alpha float64) estimate {
	n := change(now.A, now.B, now.Better, alpha)
	t := change(then.A, then.B, now.Better, alpha)
	switch {
	case n.why != "":
		return estimate{why: "this record's B/A: " + n.why}
	case t.why != "":
		return estimate{why: "the baseline's B/A: " + t.why}
	}
	e := estimate{Change: Change{Ratio: n.Ratio / t.Ratio, Low: math.NaN(), High: math.NaN()}}
	switch {
	case !n.Ok:
		e.none = "no interval of this record's B/A: " + n.none
	case !t.Ok:
		e.none = "no interval of the baseline's B/A: " + t.none
	default:
		se := math.Hypot(n.se, t.se)
		half := math.Sqrt2 * math.Erfinv(1-alpha) * se
		e.Ok, e.Low, e.High = true, e.Ratio*math.Exp(-half), e.Ratio*math.Exp(half)
	}
	e.Shown = stats.ShowIndex(100*e.Ratio, 100*e.Low, 100*e.High)
	return e
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
	line := fmt.Sprintf("gate %s: %s (%s is better): then 100 -> now %s (%s), %+.1f %%, on the %s: %s",
		r.ID(), r.Metric, r.Better, index, ci, r.ChangePct, r.Basis, verdict)
	if r.Control.moved() {
		line += fmt.Sprintf("; the control arm A moved %s between the records, beyond its runs' noise, and B alone %s",
			r.Control.words(r.Confidence), r.BAlone.words(r.Confidence))
	}
	return line
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
