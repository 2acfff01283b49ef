package metric

import (
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/metric/stats"
	"github.com/benchbook/benchbook/runtime/record"
)

// A notebook's comparisons as one family (issue 32): a notebook that
// compares ten metrics of identical arms at alpha 0.05 calls at least one
// of them in about a third of notebooks. The decision rests on the
// headline that verdict(...) names, judged at alpha; every other
// comparison the record shows or the notebook bound to a name is
// secondary, and its verdict rests on its p adjusted by Holm's method over
// the secondary comparisons, which keeps the chance of any false secondary
// verdict at most alpha. A notebook without a verdict has no headline:
// then all its comparisons are adjusted together.
//
// The adjustment needs the whole run, so it is a record pass (the
// module's Pass, which sees every comparison the record keeps: Named):
// the record gets adjusted copies; the cells' values (c.verdict in the
// notebook's own code) stay unadjusted.

// adjustRecord sets every comparison's role and adjusted verdict in r, and
// lifts a busy box to the record's top.
func adjustRecord(r *record.Record) {
	comps, order := recordComparisons(r)
	v, _ := r.Verdict.(*Verdict)
	var head *Comparison
	headKey := ""
	if v != nil && v.Headline != nil {
		head, headKey = v.Headline, comparisonKey(v.Headline)
	}
	var family []string
	for _, k := range order {
		if k != headKey {
			family = append(family, k)
		}
	}
	adjusted := map[string]*Comparison{}
	role := "secondary"
	if head == nil {
		role = "family"
	}
	if (head != nil && len(family) > 0) || len(family) > 1 {
		if head != nil {
			h := *head
			h.Role = "headline"
			adjusted[headKey] = &h
		}
		ps := make([]float64, len(family))
		for i, k := range family {
			ps[i] = comps[k].PValue
		}
		for i, p := range stats.Holm(ps) {
			adjusted[family[i]] = secondary(comps[family[i]], role, p, len(family))
		}
	}
	replaceComparisons(r, adjusted)
	if v != nil && len(adjusted) > 0 {
		cp := *v
		if h := adjusted[headKey]; h != nil {
			cp.Headline = h
		}
		if role == "secondary" {
			for _, k := range family {
				cp.Secondary = append(cp.Secondary, adjusted[k])
			}
		}
		r.Verdict = &cp
	}
	busyAtTop(r, comps, order, head)
}

// busyAtTop lifts the comparisons' busy-box warnings to the record's top,
// once per distinct warning with the metrics it concerns (the comparisons
// of one experiment share their runs, so their warning is one).
func busyAtTop(r *record.Record, comps map[string]*Comparison, order []string, head *Comparison) {
	var texts []string
	metrics := map[string][]string{}
	add := func(c *Comparison) {
		if c.Busy == "" || slices.Contains(metrics[c.Busy], c.Metric) {
			return
		}
		if metrics[c.Busy] == nil {
			texts = append(texts, c.Busy)
		}
		metrics[c.Busy] = append(metrics[c.Busy], c.Metric)
	}
	if head != nil {
		add(head)
	}
	for _, k := range order {
		add(comps[k])
	}
	for _, text := range texts {
		what := "comparison of " + metrics[text][0]
		if len(metrics[text]) > 1 {
			what = "comparisons of " + strings.Join(metrics[text], ", ")
		}
		r.Warnings = append(r.Warnings, what+": "+text)
	}
}

// secondary is c's copy judged on its adjusted p.
func secondary(c *Comparison, role string, p float64, n int) *Comparison {
	cp := *c
	cp.Role, cp.AdjustedP, cp.Family, cp.RawVerdict = role, p, n, c.Verdict
	if c.Verdict != "~" && p > c.Alpha {
		cp.Verdict = "~"
		what := "secondary comparisons"
		if role == "family" {
			what = "comparisons (no verdict(...) names a headline)"
		}
		cp.Reason = fmt.Sprintf("Holm-adjusted p = %s > alpha %g over the notebook's %d %s (unadjusted p = %s)",
			stats.Num(p), c.Alpha, n, what, stats.Num(c.PValue))
	}
	return &cp
}

// recordComparisons are the record's distinct comparisons, named ones
// first, then the shown ones, in record order; a comparison bound to a
// name and shown too, or shown twice, is one.
func recordComparisons(r *record.Record) (map[string]*Comparison, []string) {
	comps := map[string]*Comparison{}
	var order []string
	add := func(v starlark.Value) {
		c, ok := v.(*Comparison)
		if !ok {
			return
		}
		k := comparisonKey(c)
		if _, seen := comps[k]; !seen {
			comps[k] = c
			order = append(order, k)
		}
	}
	for _, n := range r.Named {
		add(n.Value)
	}
	for _, c := range r.Cells {
		for _, out := range c.Outputs {
			add(out)
		}
	}
	return comps, order
}

// comparisonKey identifies a comparison by what it compared: the same
// metric of the same runs is one comparison however often it is shown.
func comparisonKey(c *Comparison) string {
	return fmt.Sprintf("%s|%s|%s|%s|%v|%v|%s", c.Metric, c.Better, c.ALabel, c.BLabel, c.A, c.B, c.Design())
}

func replaceComparisons(r *record.Record, by map[string]*Comparison) {
	swap := func(v starlark.Value) starlark.Value {
		if c, ok := v.(*Comparison); ok {
			if cp := by[comparisonKey(c)]; cp != nil {
				return cp
			}
		}
		return v
	}
	for i := range r.Named {
		r.Named[i].Value = swap(r.Named[i].Value)
	}
	for i := range r.Cells {
		for j := range r.Cells[i].Outputs {
			r.Cells[i].Outputs[j] = swap(r.Cells[i].Outputs[j])
		}
	}
}
