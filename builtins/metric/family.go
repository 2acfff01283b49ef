package metric

import (
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/markdown"
	"github.com/benchbook/benchbook/builtins/internal/table"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/stats"
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
	reconcileOutputs(r, comps, adjusted)
	if w := holmOutOfReach(comps, family); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
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
	verdictRowsInCells(r, v)
	busyAtTop(r, comps, order, head)
}

// verdictRowsInCells shows, where a cell displayed the verdict, its
// decision row and a link to the verdict at the record's top, which says
// the rest: the record says it once.
func verdictRowsInCells(r *record.Record, v *Verdict) {
	top, ok := r.Verdict.(*Verdict)
	if v == nil || !ok {
		return
	}
	for i := range r.Cells {
		for j, out := range r.Cells[i].Outputs {
			// The one the engine put on top (a redacted copy of it too).
			if x, ok := out.(*Verdict); ok && (x == v || sameVerdict(x, v)) {
				r.Cells[i].Outputs[j] = verdictInCell{top}
			}
		}
	}
}

func sameVerdict(x, y *Verdict) bool {
	eq, err := x.CompareSameType(syntax.EQL, y, 1)
	return err == nil && eq
}

// busyAtTop lifts the comparisons' busy-box warnings to the record's top,
// once per distinct warning with the metrics it concerns (the comparisons
// of one experiment share their runs, so their warning is one); a warning
// the verdict at the top shows already is not said again.
func busyAtTop(r *record.Record, comps map[string]*Comparison, order []string, head *Comparison) {
	var shown []string
	if v, ok := r.Verdict.(*Verdict); ok {
		shown = v.busyLines()
	}
	var texts []string
	metrics := map[string][]string{}
	add := func(c *Comparison) {
		if c.Busy == "" || slices.Contains(metrics[c.Busy], c.Metric) || slices.Contains(shown, c.Busy) {
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
		if r := outOfReach(c, n); r != "" {
			cp.Reason += "; " + r
		}
	}
	return &cp
}

// familyWords names a comparison's family: "2 secondary comparisons".
func (c *Comparison) familyWords() string {
	if c.Role == "family" {
		return fmt.Sprintf("%d comparisons", c.Family)
	}
	return fmt.Sprintf("%d secondary comparisons", c.Family)
}

// VerdictWords is the verdict as the record words it: the verdict, or,
// when Holm's adjustment changed it, both and the word that reconciles
// them ("IMPROVES alone; ~ after Holm over 2 secondary comparisons"), so
// that a reader never sees two verdicts for one comparison without it.
func (c *Comparison) VerdictWords() string {
	if c.RawVerdict == "" || c.RawVerdict == c.Verdict {
		return c.Verdict
	}
	return fmt.Sprintf("%s alone; %s after Holm over %s", c.RawVerdict, c.Verdict, c.familyWords())
}

// outOfReach says, when no p c's design can give passes Holm over n
// comparisons (6 pairs give at least 2/64 = 0.031, times 2 is 0.0625),
// so and how many pairs can; "" when one can.
func outOfReach(c *Comparison, n int) string {
	least := c.SmallestP()
	if float64(n)*least <= c.Alpha {
		return ""
	}
	s := fmt.Sprintf("no p that %s can give passes Holm over %d %s (the smallest, %s, times %d is %s > alpha %g)",
		c.Runs(), n, map[bool]string{true: "secondary comparisons", false: "comparisons"}[c.Role != "family"],
		stats.Num(least), n, stats.Num(float64(n)*least), c.Alpha)
	if c.Paired {
		s += fmt.Sprintf(": %d pairs are the fewest that can", stats.MinPairs(c.Alpha/float64(n)))
	}
	return s
}

// holmOutOfReach is the record's warning when no comparison of the family
// can pass Holm's adjustment whatever it measures: the design cannot
// decide what the record's secondary comparisons claim.
func holmOutOfReach(comps map[string]*Comparison, family []string) string {
	if len(family) < 2 && !(len(family) == 1 && len(comps) > 1) {
		return ""
	}
	var best *Comparison
	for _, k := range family {
		if c := comps[k]; best == nil || c.SmallestP() < best.SmallestP() {
			best = c
		}
	}
	n := len(family)
	if best == nil || float64(n)*best.SmallestP() <= best.Alpha {
		return ""
	}
	s := fmt.Sprintf("no secondary comparison can pass Holm's adjustment over the notebook's %d, whatever it measures: the smallest p %s can give is %s, times %d is %s > alpha %g",
		n, best.Runs(), stats.Num(best.SmallestP()), n, stats.Num(float64(n)*best.SmallestP()), best.Alpha)
	if best.Paired {
		s += fmt.Sprintf("; %d pairs are the fewest that can (abab(pairs = ...)), or fewer secondary comparisons", stats.MinPairs(best.Alpha/float64(n)))
	}
	return s
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

// reconcileOutputs puts the adjusted verdicts where a cell wrote the
// unadjusted ones (issue 47: the quickstart's table said IMPROVES for
// p99_ms while its verdict block said ~): a table row that names a
// comparison's metric and shows its unadjusted verdict shows
// VerdictWords instead, and a Markdown output that holds a comparison's
// unadjusted sentence (c.sentence) holds the record's. A verdict word the
// record cannot tie to its comparison (a row without the metric's name,
// two comparisons of one metric) is left as the cell wrote it, and the
// record says which verdicts the adjustment changed. The cells' own values
// stay as they were.
func reconcileOutputs(r *record.Record, orig, adjusted map[string]*Comparison) {
	var changed []*Comparison
	byMetric := map[string][]*Comparison{} // every comparison of the record, as the record has it
	for k, c := range orig {
		if a := adjusted[k]; a != nil {
			c = a
		}
		byMetric[c.Metric] = append(byMetric[c.Metric], c)
		if c.RawVerdict != "" && c.RawVerdict != c.Verdict {
			changed = append(changed, c)
		}
	}
	if len(changed) == 0 {
		return
	}
	slices.SortFunc(changed, func(x, y *Comparison) int { return strings.Compare(x.Metric, y.Metric) })
	for i := range r.Cells {
		for j, out := range r.Cells[i].Outputs {
			switch x := out.(type) {
			case *table.Table:
				t, loose := reconcileTable(x, changed, byMetric)
				r.Cells[i].Outputs[j] = t
				if loose != "" {
					r.Warnings = append(r.Warnings, fmt.Sprintf("cell %q shows %s in a table that does not tie it to its comparison (no column holds the metric's name, or two comparisons share it): the notebook's code read it unadjusted (c.verdict); in this record %s",
						r.Cells[i].Name, loose, changedWords(changed, loose)))
				}
			case markdown.Markdown:
				s := string(x)
				for k, c := range adjusted {
					if c.RawVerdict != c.Verdict && orig[k] != nil {
						s = strings.ReplaceAll(s, orig[k].Line(), c.Line())
					}
				}
				r.Cells[i].Outputs[j] = markdown.Markdown(s)
			}
		}
	}
}

// reconcileTable is t with every row that names one comparison's metric
// (one comparison of that metric in the record) showing its VerdictWords
// where it showed the unadjusted verdict, and the first verdict word left
// in a row that names no comparison that some changed comparison had
// unadjusted ("" when none).
func reconcileTable(t *table.Table, changed []*Comparison, byMetric map[string][]*Comparison) (*table.Table, string) {
	rows := make([][]starlark.Value, len(t.Rows()))
	loose := ""
	for i, row := range t.Rows() {
		rows[i] = slices.Clone(row)
		var mine *Comparison
		for _, v := range row {
			if s, ok := v.(starlark.String); ok && len(byMetric[string(s)]) == 1 {
				mine = byMetric[string(s)][0]
			}
		}
		for j, v := range row {
			s, ok := v.(starlark.String)
			switch {
			case !ok:
			case mine != nil:
				if mine.RawVerdict != mine.Verdict && string(s) == mine.RawVerdict {
					rows[i][j] = starlark.String(mine.VerdictWords())
				}
			case loose == "" && slices.ContainsFunc(changed, func(c *Comparison) bool { return string(s) == c.RawVerdict }):
				loose = string(s)
			}
		}
	}
	return table.New(t.Columns(), rows), loose
}

// changedWords lists the changed comparisons whose unadjusted verdict was
// word: "p99_ms: IMPROVES alone; ~ after Holm over 2 secondary comparisons".
func changedWords(changed []*Comparison, word string) string {
	var parts []string
	for _, c := range changed {
		if c.RawVerdict == word {
			parts = append(parts, c.Metric+": "+c.VerdictWords())
		}
	}
	return strings.Join(parts, "; ")
}
