package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
)

// Regression gates: `benchbook run -baseline old.json nb.star` compares the
// comparisons of this run (their "after" arm) with those of an earlier JSON
// record, and fails when a metric got worse by more than the allowed
// percentage. Every comparison a cell bound to a global name is gated, shown
// or not, and so is every comparison a cell displayed. Each gate (and each
// comparison that could not be gated) is one line on stderr; a run in which
// nothing could be gated fails. Records from a different kind of machine
// are refused unless the comparison is declared exploratory, and records
// made with other parameters unless -allow-param-mismatch.

type gateOptions struct {
	baseline           string
	maxRegression      float64 // percent
	allowMismatch      bool
	allowParamMismatch bool
}

func (o *gateOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.baseline, "baseline", "", "JSON record of an earlier run: fail when a comparison's metric regressed")
	fs.Float64Var(&o.maxRegression, "max-regression", 5, "with -baseline: the largest allowed regression, in percent")
	fs.BoolVar(&o.allowMismatch, "allow-env-mismatch", false, "with -baseline: compare records from different machines (exploratory: no gates)")
	fs.BoolVar(&o.allowParamMismatch, "allow-param-mismatch", false, "with -baseline: gate even when the baseline ran with other -p parameters")
}

// gateMetric is one comparison's headline figure.
type gateMetric struct {
	Cell   string
	Name   string // the global it is bound to, "" for a displayed value only
	Metric string
	Better string
	After  float64 // the B arm's typical figure: its geometric mean (its mean in records before issue 23)
	// Estimator is "geomean" or "mean": figures of different estimators
	// are not gated against each other.
	Estimator string
}

// id pairs a comparison with its baseline: by cell and global name, or by
// cell and metric for a comparison that is only displayed.
func (m gateMetric) id() string {
	if m.Name != "" {
		return m.Cell + "/" + m.Name
	}
	return m.Cell + "/" + m.Metric
}

// gateResult is one gate's outcome.
type gateResult struct {
	gateMetric
	Old, ChangePct float64
	Failed         bool
}

// jsonOutput is a value in a JSON record.
type jsonOutput struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// jsonRecordView is the part of a JSON record the gates read.
type jsonRecordView struct {
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
		Host struct {
			CPU      string `json:"cpu"`
			Cores    int    `json:"cores"`
			MemBytes uint64 `json:"mem_bytes"`
			Kernel   string `json:"kernel"`
		} `json:"host"`
		Params map[string]string `json:"params"`
	} `json:"provenance"`
}

// namedComparisons lists the comparisons cells bound to global names, in
// cell order, so that the record carries them for a later -baseline.
func namedComparisons(e *runtime.Engine) []record.Named {
	var out []record.Named
	for _, st := range e.States() {
		vals := e.CellValues(st)
		for _, name := range slices.Sorted(maps.Keys(vals)) {
			if v := vals[name]; v.Type() == "comparison" {
				out = append(out, record.Named{Cell: st.Def.Name, Name: name, Value: v})
			}
		}
	}
	return out
}

// applyGates compares rec with the baseline; it returns an error when a
// gate failed, nothing could be gated, or the environments or parameters
// differ, and adds its findings to the record's warnings.
func applyGates(rec *record.Record, o gateOptions, stderr io.Writer) error {
	base, err := readBaseline(o.baseline)
	if err != nil {
		return err
	}
	if diff := envDiff(base, rec.Prov.Host); diff != "" {
		if !o.allowMismatch {
			return usageError{fmt.Sprintf("-baseline %s was measured on another kind of machine (%s); refusing to compare. -allow-env-mismatch makes the comparison exploratory (no gates)", o.baseline, diff)}
		}
		rec.Warnings = append(rec.Warnings, "baseline from another machine ("+diff+"): exploratory comparison, gates skipped")
		fmt.Fprintf(stderr, "baseline from another machine (%s): exploratory, gates skipped\n", diff)
		return nil
	}
	if diff := paramDiff(base.Prov.Params, rec.Prov.Params); diff != "" {
		if !o.allowParamMismatch {
			return usageError{fmt.Sprintf("-baseline %s ran with other parameters (%s); refusing to gate. Rerun with the baseline's -p values, or -allow-param-mismatch to gate anyway", o.baseline, diff)}
		}
		line := "baseline ran with other parameters (" + diff + "): gated anyway (-allow-param-mismatch)"
		rec.Warnings = append(rec.Warnings, line)
		fmt.Fprintln(stderr, line)
	}
	return gate(rec, metricsByID(baselineMetrics(base)), o, stderr)
}

func readBaseline(path string) (jsonRecordView, error) {
	var base jsonRecordView
	data, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("-baseline: %w", err)
	}
	if err := json.Unmarshal(data, &base); err != nil {
		return base, fmt.Errorf("-baseline %s: not a JSON record (write one with -format json): %v", path, err)
	}
	return base, nil
}

func metricsByID(ms []gateMetric) map[string]gateMetric {
	out := map[string]gateMetric{}
	for _, m := range ms {
		out[m.id()] = m
	}
	return out
}

// gate runs the gates, one line each on stderr and in the record, plus a
// line for each comparison that had nothing to be gated against.
func gate(rec *record.Record, old map[string]gateMetric, o gateOptions, stderr io.Writer) error {
	now := currentMetrics(rec)
	results := compareGates(now, old, o.maxRegression)
	note := func(line string) {
		fmt.Fprintln(stderr, line)
		rec.Warnings = append(rec.Warnings, line)
	}
	gated := map[string]bool{}
	failed := 0
	for _, r := range results {
		verdict := "ok"
		if r.Failed {
			verdict, failed = "REGRESSION", failed+1
		}
		gated[r.id()] = true
		note(fmt.Sprintf("gate %s: %s %.4g → %.4g (%+.1f%%, %s is better, limit %.1f%%) %s",
			r.id(), r.Metric, r.Old, r.After, r.ChangePct, r.Better, o.maxRegression, verdict))
	}
	for _, m := range now {
		if !gated[m.id()] {
			note(fmt.Sprintf("not gated %s: %s (%s)", m.id(), m.Metric, whyNotGated(m, old)))
		}
	}
	if len(results) == 0 {
		return fmt.Errorf("-baseline %s: nothing could be gated: this run has %d comparison(s), the baseline %d, none in common by cell and name (or with a usable figure)",
			o.baseline, len(now), len(old))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d regression gates failed against %s", failed, len(results), o.baseline)
	}
	return nil
}

func whyNotGated(m gateMetric, old map[string]gateMetric) string {
	o, ok := old[m.id()]
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
	return "not comparable"
}

// compareGates pairs metrics by cell and name. A change in the bad
// direction larger than limit percent fails.
func compareGates(now []gateMetric, old map[string]gateMetric, limit float64) []gateResult {
	var out []gateResult
	for _, m := range now {
		o, ok := old[m.id()]
		if !ok || o.After == 0 || math.IsNaN(o.After) || math.IsNaN(m.After) || o.Metric != m.Metric || o.Better != m.Better || o.Estimator != m.Estimator {
			continue
		}
		change := (m.After - o.After) / math.Abs(o.After) * 100
		worse := change
		if m.Better == "higher" {
			worse = -change
		}
		out = append(out, gateResult{gateMetric: m, Old: o.After, ChangePct: change, Failed: worse > limit})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id() < out[j].id() })
	return out
}

// currentMetrics lists this run's comparisons: the named ones, then the
// displayed ones that are not also named (the same value shown).
func currentMetrics(rec *record.Record) []gateMetric {
	var named, shown []gateMetric
	for _, n := range rec.Named {
		if j, ok := n.Value.(record.JSONer); ok {
			if m, ok := metricOf(n.Cell, n.Name, j.JSON()); ok {
				named = append(named, m)
			}
		}
	}
	for _, c := range rec.Cells {
		for _, v := range c.Outputs {
			j, ok := v.(record.JSONer)
			if !ok || v.Type() != "comparison" {
				continue
			}
			if m, ok := metricOf(c.Name, "", j.JSON()); ok {
				shown = append(shown, m)
			}
		}
	}
	return mergeShown(named, shown)
}

func baselineMetrics(base jsonRecordView) []gateMetric {
	var named, shown []gateMetric
	for _, n := range base.Named {
		if m, ok := decodeMetric(n.Cell, n.Name, n.jsonOutput); ok {
			named = append(named, m)
		}
	}
	for _, c := range base.Cells {
		for _, o := range c.Outputs {
			if m, ok := decodeMetric(c.Name, "", o); ok {
				shown = append(shown, m)
			}
		}
	}
	return mergeShown(named, shown)
}

func decodeMetric(cell, name string, o jsonOutput) (gateMetric, bool) {
	if o.Type != "comparison" {
		return gateMetric{}, false
	}
	var v any
	if json.Unmarshal(o.Value, &v) != nil {
		return gateMetric{}, false
	}
	return metricOf(cell, name, v)
}

// mergeShown adds the displayed comparisons that are not a named one
// shown again (same cell, metric and figure).
func mergeShown(named, shown []gateMetric) []gateMetric {
	out := named
	for _, s := range shown {
		dup := slices.ContainsFunc(named, func(n gateMetric) bool {
			return n.Cell == s.Cell && n.Metric == s.Metric && n.After == s.After
		})
		if !dup {
			out = append(out, s)
		}
	}
	return out
}

func metricOf(cell, name string, v any) (gateMetric, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return gateMetric{}, false
	}
	g := gateMetric{Cell: cell, Name: name}
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

// paramDiff names the -p parameters that differ between the runs.
func paramDiff(base, now map[string]string) string {
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

// envDiff names what differs between the baseline's machine and this one.
func envDiff(base jsonRecordView, now record.Host) string {
	b := base.Prov.Host
	var diffs []string
	if b.CPU != now.CPU {
		diffs = append(diffs, fmt.Sprintf("CPU %q vs %q", b.CPU, now.CPU))
	}
	if b.Cores != now.Cores {
		diffs = append(diffs, fmt.Sprintf("%d vs %d cores", b.Cores, now.Cores))
	}
	if b.MemBytes>>30 != now.MemBytes>>30 {
		diffs = append(diffs, fmt.Sprintf("%d vs %d GiB", b.MemBytes>>30, now.MemBytes>>30))
	}
	return strings.Join(diffs, ", ")
}
