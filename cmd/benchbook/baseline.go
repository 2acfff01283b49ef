package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/runtime/record"
)

// Regression gates: `benchbook run --baseline old.json nb.star` compares the
// comparisons of this run (their "after" arm) with those of an earlier JSON
// record, and fails when a metric got worse by more than the allowed
// percentage. Records from a different kind of machine are refused unless
// the comparison is declared exploratory.

type gateOptions struct {
	baseline      string
	maxRegression float64 // percent
	allowMismatch bool
}

// gateMetric is one comparison's headline figure.
type gateMetric struct {
	Cell, Metric, Better string
	After                float64 // mean of the B arm
}

func (m gateMetric) id() string { return m.Cell + "/" + m.Metric }

// gateResult is one gate's outcome.
type gateResult struct {
	gateMetric
	Old, ChangePct float64
	Failed         bool
}

// jsonRecordView is the part of a JSON record the gates read.
type jsonRecordView struct {
	Cells []struct {
		Name    string `json:"name"`
		Outputs []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"outputs"`
	} `json:"cells"`
	Prov struct {
		Host struct {
			CPU      string `json:"cpu"`
			Cores    int    `json:"cores"`
			MemBytes uint64 `json:"mem_bytes"`
			Kernel   string `json:"kernel"`
		} `json:"host"`
	} `json:"provenance"`
}

// applyGates compares rec with the baseline; it returns an error when a
// gate failed or the environments differ, and adds its findings to the
// record's warnings.
func applyGates(rec *record.Record, o gateOptions, stderr io.Writer) error {
	data, err := os.ReadFile(o.baseline)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	var base jsonRecordView
	if err := json.Unmarshal(data, &base); err != nil {
		return fmt.Errorf("--baseline %s: not a JSON record (write one with -format json): %v", o.baseline, err)
	}
	if diff := envDiff(base, rec.Prov.Host); diff != "" {
		if !o.allowMismatch {
			return usageError{fmt.Sprintf("--baseline %s was measured on another kind of machine (%s); refusing to compare. -allow-env-mismatch makes the comparison exploratory (no gates)", o.baseline, diff)}
		}
		rec.Warnings = append(rec.Warnings, "baseline from another machine ("+diff+"): exploratory comparison, gates skipped")
		fmt.Fprintf(stderr, "baseline from another machine (%s): exploratory, gates skipped\n", diff)
		return nil
	}
	old := map[string]gateMetric{}
	for _, m := range baselineMetrics(base) {
		old[m.id()] = m
	}
	results := compareGates(currentMetrics(rec), old, o.maxRegression)
	if len(results) == 0 {
		rec.Warnings = append(rec.Warnings, "baseline "+o.baseline+": no comparison in common, nothing gated")
		return nil
	}
	failed := 0
	for _, r := range results {
		verdict := "ok"
		if r.Failed {
			verdict, failed = "REGRESSION", failed+1
		}
		line := fmt.Sprintf("gate %s: %s %.4g → %.4g (%+.1f%%, %s is better, limit %.1f%%) %s",
			r.Cell, r.Metric, r.Old, r.After, r.ChangePct, r.Better, o.maxRegression, verdict)
		fmt.Fprintln(stderr, line)
		rec.Warnings = append(rec.Warnings, line)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d regression gates failed against %s", failed, len(results), o.baseline)
	}
	return nil
}

// compareGates pairs metrics by cell and name. A change in the bad
// direction larger than limit percent fails.
func compareGates(now []gateMetric, old map[string]gateMetric, limit float64) []gateResult {
	var out []gateResult
	for _, m := range now {
		o, ok := old[m.id()]
		if !ok || o.After == 0 || math.IsNaN(m.After) {
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

func currentMetrics(rec *record.Record) []gateMetric {
	var out []gateMetric
	for _, c := range rec.Cells {
		for _, v := range c.Outputs {
			j, ok := v.(record.JSONer)
			if !ok || v.Type() != "comparison" {
				continue
			}
			if m, ok := metricOf(c.Name, j.JSON()); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func baselineMetrics(base jsonRecordView) []gateMetric {
	var out []gateMetric
	for _, c := range base.Cells {
		for _, o := range c.Outputs {
			if o.Type != "comparison" {
				continue
			}
			var v any
			if json.Unmarshal(o.Value, &v) == nil {
				if m, ok := metricOf(c.Name, v); ok {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

func metricOf(cell string, v any) (gateMetric, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return gateMetric{}, false
	}
	g := gateMetric{Cell: cell}
	g.Metric, _ = m["metric"].(string)
	g.Better, _ = m["better"].(string)
	after, ok := m["mean_b"].(float64)
	g.After = after
	return g, ok && g.Metric != ""
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
