package metric

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/markdown"
	"github.com/benchbook/benchbook/builtins/internal/table"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
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
	_, detail := rv.MarkdownDetail()
	if !strings.Contains(detail, "Secondary comparisons (2)") || !regexp.MustCompile(`<td>IMPROVES alone; ~ after Holm over 2 secondary comparisons</td><td class="num">0.0312</td><td class="num">0.0625</td>`).MatchString(rv.HTML()) {
		t.Errorf("verdict block:\n%s\n%s", detail, rv.HTML())
	}
	// The busy box: once, in the verdict at the top, not again in the
	// record's warnings.
	if slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "BUSY BOX") }) {
		t.Errorf("record warnings repeat the verdict's busy box: %q", r.Warnings)
	}
	if strings.Count(rv.HTML(), "BUSY BOX") != 1 || strings.Count(rv.Markdown(), "BUSY BOX") != 1 {
		t.Errorf("the verdict says the busy box %d times: %s", strings.Count(rv.HTML(), "BUSY BOX"), rv.HTML())
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

// TestOneComparisonOneVerdict (issue 47, item 9): the quickstart's table
// showed IMPROVES for p99_ms and server_cpu_us_per_req (c.verdict, the
// comparison alone) while its verdict block said "~ no conclusion
// (Holm-adjusted p 0.0625)" for the same comparisons. In the record a
// verdict word that the adjustment changed is never shown bare: the table
// built from c.verdict beside c.metric says "IMPROVES alone; ~ after Holm
// over 2 secondary comparisons", as the verdict block does, and a sentence
// a cell wrote from c.sentence is the record's. With 6 pairs no secondary
// can pass Holm at all (the smallest p is 2/64 = 0.031, times 2): the
// reason and the record say so, and how many pairs can.
func TestOneComparisonOneVerdict(t *testing.T) {
	g := startest.MustExec(t, startest.Options{Modules: testModules()}, `
a = [100, 102, 98, 101, 99, 103]
rps = compare(a, [120, 125, 119, 122, 121, 124], metric = "rps", better = "higher")
p99 = compare(a, [90, 91, 88, 90, 89, 92], metric = "p99_ms", better = "lower")
cpu = compare(a, [80, 83, 79, 81, 80, 82], metric = "server_cpu_us_per_req", better = "lower")
rows = table([{"metric": c.metric, "index": c.index, "verdict": c.verdict} for c in [rps, p99, cpu]])
said = md("p99: " + p99.sentence)
`)
	rps, p99, cpu := g["rps"].(*Comparison), g["p99"].(*Comparison), g["cpu"].(*Comparison)
	for _, c := range []*Comparison{rps, p99, cpu} {
		if c.Verdict != "IMPROVES" {
			t.Fatalf("%s alone: %s", c.Metric, c.Line())
		}
	}
	rows := g["rows"].(*table.Table)
	md := markdown.Markdown("p99: " + p99.Line())
	r := &record.Record{
		Verdict: &Verdict{Status: "kept", Headline: rps, Equivalence: "same"},
		Named:   []record.Named{{Cell: "compare", Name: "rps", Value: rps}, {Cell: "compare", Name: "p99", Value: p99}, {Cell: "compare", Name: "cpu", Value: cpu}},
		Cells:   []record.Cell{{Name: "compare", Outputs: []starlark.Value{rows, md}}},
	}
	adjustRecord(r)
	out := r.Cells[0].Outputs[0].(*table.Table)
	words := map[string]string{}
	for _, row := range out.Rows() {
		m, _ := starlark.AsString(row[0])
		v, _ := starlark.AsString(row[2])
		words[m] = v
	}
	if words["rps"] != "IMPROVES" {
		t.Errorf("the headline's verdict in the table: %q", words["rps"])
	}
	for _, m := range []string{"p99_ms", "server_cpu_us_per_req"} {
		if words[m] != "IMPROVES alone; ~ after Holm over 2 secondary comparisons" {
			t.Errorf("%s in the table: %q", m, words[m])
		}
	}
	if rows.Rows()[1][2] != starlark.String("IMPROVES") {
		t.Errorf("the cell's own table changed: %v", rows.Rows()[1])
	}
	said := string(r.Cells[0].Outputs[1].(markdown.Markdown))
	if strings.Contains(said, "IMPROVES -") || !strings.Contains(said, "IMPROVES alone; ~ after Holm over 2 secondary comparisons") {
		t.Errorf("the sentence a cell wrote: %s", said)
	}
	// The verdict block says the same words.
	rv := r.Verdict.(*Verdict)
	_, detail := rv.MarkdownDetail()
	for _, s := range []string{detail, rv.HTML()} {
		if !strings.Contains(s, "IMPROVES alone; ~ after Holm over 2 secondary comparisons") {
			t.Errorf("verdict block:\n%s", s)
		}
	}
	// No secondary can pass at 6 pairs: said in the reason and at the top.
	adj := r.Named[1].Value.(*Comparison)
	if !strings.Contains(adj.Reason, "no p that 6 pairs can give passes Holm over 2 secondary comparisons") ||
		!strings.Contains(adj.Reason, "7 pairs are the fewest") {
		t.Errorf("reason: %s", adj.Reason)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, "no secondary comparison can pass Holm") && strings.Contains(w, "7 pairs")
	}) {
		t.Errorf("record warnings: %q", r.Warnings)
	}
	if slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "does not tie it") }) {
		t.Errorf("a table whose every row names its comparison got a warning: %q", r.Warnings)
	}
	// A table whose rows do not name the metric cannot be tied to its
	// comparison: the record says which verdicts changed.
	bare := table.New([]string{"verdict"}, [][]starlark.Value{{starlark.String("IMPROVES")}})
	r = &record.Record{
		Verdict: &Verdict{Status: "kept", Headline: rps, Equivalence: "same"},
		Named:   []record.Named{{Cell: "compare", Name: "rps", Value: rps}, {Cell: "compare", Name: "p99", Value: p99}, {Cell: "compare", Name: "cpu", Value: cpu}},
		Cells:   []record.Cell{{Name: "summary", Outputs: []starlark.Value{bare}}},
	}
	adjustRecord(r)
	if !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, `cell "summary" shows IMPROVES`) && strings.Contains(w, "p99_ms: IMPROVES alone; ~ after Holm")
	}) {
		t.Errorf("record warnings: %q", r.Warnings)
	}
}
