package metric

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/record"
)

func comparisonOf(t *testing.T, name string, a, b []float64) *Comparison {
	t.Helper()
	c, err := newComparison(compareInput{metric: name, better: "higher", aLabel: "A", bLabel: "B", a: a, b: b})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRecordFamily (issue 32, case 4): the headline verdict(...) names is
// judged at alpha; the other comparisons of the record are secondary and
// judged on their Holm-adjusted p, in the record's copy only; a busy
// comparison reaches the record's top.
func TestRecordFamily(t *testing.T) {
	a := []float64{100, 102, 98, 101, 99, 103}
	head := comparisonOf(t, "rps", a, []float64{120, 125, 119, 122, 121, 124}) // p = 2/64
	weak := comparisonOf(t, "ok_per_s", a, []float64{101, 103, 99, 102, 100, 104})
	same := comparisonOf(t, "count", a, []float64{99, 103, 97, 102, 100, 102})
	if weak.Verdict != "IMPROVES" {
		t.Fatalf("weak: %s", weak.Line())
	}
	head.Busy = "BUSY BOX: other processes used up to 1.90 cores"
	v := &Verdict{Status: "kept", Headline: head, Equivalence: "same"}
	r := &record.Record{
		Verdict: v,
		Named:   []record.Named{{Cell: "cmp", Name: "rps", Value: head}, {Cell: "cmp", Name: "weak", Value: weak}},
		Cells:   []record.Cell{{Name: "cmp", Outputs: []starlark.Value{weak, same}}},
	}
	adjustRecord(r)
	rv := r.Verdict.(*Verdict)
	if rv == v || rv.Headline.Role != "headline" || rv.Headline.Verdict != "IMPROVES" || len(rv.Secondary) != 2 {
		t.Fatalf("verdict copy %+v", rv)
	}
	w := r.Cells[0].Outputs[0].(*Comparison)
	if w.Role != "secondary" || w.Family != 2 || w.RawVerdict != "IMPROVES" || w.Verdict != "~" || !strings.Contains(w.Reason, "Holm-adjusted p = 0.0625 > alpha 0.05") {
		t.Errorf("secondary: %+v\n%s", w.Comparison.Verdict, w.Line())
	}
	if r.Named[1].Value != r.Cells[0].Outputs[0] {
		t.Errorf("a comparison named and shown is one: %p %p", r.Named[1].Value, r.Cells[0].Outputs[0])
	}
	if weak.Verdict != "IMPROVES" || weak.Role != "" {
		t.Errorf("the cell's own value changed: %s %s", weak.Verdict, weak.Role)
	}
	if !strings.Contains(rv.Markdown(), "Secondary comparisons (2)") || !strings.Contains(rv.HTML(), "Holm-adjusted p = 0.0625 over 2 secondary comparisons; IMPROVES before the adjustment") {
		t.Errorf("verdict block:\n%s\n%s", rv.Markdown(), rv.HTML())
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "comparison of rps: BUSY BOX") {
		t.Errorf("record warnings %q", r.Warnings)
	}
	if !strings.Contains(rv.HTML(), "BUSY BOX") {
		t.Errorf("the verdict line lacks the busy box: %s", rv.HTML())
	}
	j := w.JSON().(map[string]any)
	if j["p_adjusted"] != 0.0625 || j["verdict_unadjusted"] != "IMPROVES" || j["verdict"] != "~" {
		t.Errorf("json %v", j)
	}

	// Without a verdict every comparison is in one family.
	r = &record.Record{Cells: []record.Cell{{Name: "c", Outputs: []starlark.Value{head, weak}}}}
	adjustRecord(r)
	if c := r.Cells[0].Outputs[1].(*Comparison); c.Role != "family" || c.Family != 2 {
		t.Errorf("no headline: %+v", c.Line())
	}
	// A comparison alone is judged as it is.
	r = &record.Record{Cells: []record.Cell{{Name: "c", Outputs: []starlark.Value{weak}}}}
	adjustRecord(r)
	if c := r.Cells[0].Outputs[0].(*Comparison); c.Role != "" || c.Verdict != "IMPROVES" {
		t.Errorf("alone: %s", c.Line())
	}
}
