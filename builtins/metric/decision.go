package metric

import (
	"fmt"
	"html"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/stats"
)

// The decision row (issue 52): a reviewer of the seeds' studies read one
// row of their decision table first — the candidate, the metric, before ->
// after as an index, the gain, the cost or risk, the evidence, the
// recommendation — and clicked for the detail. A verdict's record opens
// with that row, the box's business in one line under it, and the
// headline's runs, its method and the secondary comparisons one click away;
// benchbook index shows the same row for every notebook (the verdict's
// JSON carries it as "row").

// DecisionRow is a verdict as the seeds' decision table reads it.
type DecisionRow struct {
	Candidate      string // the verdict's summary: what changed, in plain words
	Metric         string // "rps (higher is better)"
	Change         string // before -> after as the headline says it: "100 → 1495"
	Interval       string // "95 % CI 1108 to 2030", "no interval"
	Gain           string // "IMPROVES +1394.8 %"
	Cost           string // secondary comparisons that worsen, and the notebook's risk
	Evidence       string // pairs, p, the seeds' rule, the arms' answers
	Recommendation string // the status: "kept", "open", ...
	Busy           string // "busy in 16 of 16 runs", "quiet", "" when unknown
}

// Row is the verdict's decision row, from its headline and (on the
// record's copy) its secondary comparisons.
func (v *Verdict) Row() DecisionRow {
	r := DecisionRow{Candidate: v.Summary, Recommendation: v.Status, Cost: v.costWords()}
	if v.Override != "" {
		r.Recommendation += " (kept for another reason: below)"
	}
	h := v.Headline
	if h == nil {
		r.Evidence = v.answersWords()
		return r
	}
	r.Metric = fmt.Sprintf("%s (%s is better)", h.Metric, h.Better)
	r.Change = h.BeforeAfter()
	r.Interval = h.intervalWords()
	r.Gain = h.gainWords()
	r.Evidence = joinNonEmpty("; ", h.evidenceWords(), v.answersWords())
	r.Busy = h.busyWords()
	return r
}

// BeforeAfter is before -> after as the decision row and the index say it:
// the index, before = 100 ("100 → 1495"), as every display rounds it
// (stats.Shown); a headline whose values carry their own unit reads in it
// first, the arms' medians: a capacity "8 → 16 users (100 → 200)".
func (c *Comparison) BeforeAfter() string {
	index := "100 → " + c.Shown().Index
	if c.Unit == "" {
		return index
	}
	return fmt.Sprintf("%s → %s %s (%s)", g(c.MedianA), g(c.MedianB), c.Unit, index)
}

func (c *Comparison) intervalWords() string {
	if !c.CI.Ok() {
		return "no interval"
	}
	return fmt.Sprintf("%.0f %% CI %s", 100*c.Confidence(), c.RatioRange())
}

// gainWords is the verdict and the gain as the sentence prints them:
// "IMPROVES +1394.8 %", "~ +3.2 %, no conclusion".
func (c *Comparison) gainWords() string {
	s := fmt.Sprintf("%s %+.1f %%", c.Verdict, c.GainPct)
	if c.Verdict == "~" {
		s += ", no conclusion"
	}
	return s
}

// evidenceWords: the runs, p, and the seeds' rule in short ("8 pairs, p =
// 0.00781; every B run beat every A run: the seeds' rule accepts").
func (c *Comparison) evidenceWords() string {
	runs := fmt.Sprintf("%d pairs", len(c.A))
	if !c.Paired {
		runs = fmt.Sprintf("%d %s and %d %s runs", len(c.A), c.ALabel, len(c.B), c.BLabel)
	}
	beat := fmt.Sprintf("every %s run beat every %s run", c.BLabel, c.ALabel)
	if !c.EveryBBeatsEveryA {
		beat = fmt.Sprintf("%d of %d %s runs beat every %s run", c.CountBeating(), len(c.B), c.BLabel, c.ALabel)
	}
	rule := "the seeds' rule accepts"
	if !c.Accepted {
		rule = "the seeds' rule does not accept"
	}
	return fmt.Sprintf("%s, p = %s (%s); %s: %s", runs, stats.Num(c.PValue), c.Test, beat, rule)
}

// busyWords is the box in the index's words: "busy in 16 of 16 runs",
// "quiet", or "" when the runs had no figures of the box.
func (c *Comparison) busyWords() string {
	switch {
	case c.BoxRuns == 0:
		return ""
	case c.Busy == "":
		return "quiet"
	}
	return fmt.Sprintf("busy in %d of %d runs", c.BusyRuns, c.BoxRuns)
}

// answersWords is what the decision knows of the arms' answers, short.
func (v *Verdict) answersWords() string {
	switch {
	case v.Equivalence == "":
		return ""
	case strings.HasPrefix(v.Equivalence, "not checked: "):
		return "answers not checked (why: in the detail)"
	}
	return "answers: " + v.Equivalence
}

// costWords are the secondary comparisons that worsen (alone or after
// Holm's adjustment) and the notebook's own risk: the seeds' "cost / risk".
func (v *Verdict) costWords() string {
	var parts []string
	for _, c := range v.Secondary {
		switch {
		case c.Verdict == "WORSENS":
			parts = append(parts, fmt.Sprintf("%s WORSENS %+.1f %%", c.Metric, c.GainPct))
		case c.RawVerdict == "WORSENS":
			parts = append(parts, fmt.Sprintf("%s WORSENS %+.1f %% alone (~ after Holm)", c.Metric, c.GainPct))
		}
	}
	if len(parts) == 0 && len(v.Secondary) > 0 {
		parts = append(parts, fmt.Sprintf("no secondary comparison worsens (%d compared)", len(v.Secondary)))
	}
	if v.Risk != "" {
		parts = append(parts, v.Risk)
	}
	if len(parts) == 0 {
		return "none measured or stated"
	}
	return strings.Join(parts, "; ")
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// fields are the row for a JSON record and the index, which reads it
// back.
func (r DecisionRow) fields() map[string]any {
	return map[string]any{"candidate": r.Candidate, "metric": r.Metric, "change": r.Change, "interval": r.Interval,
		"gain": r.Gain, "cost": r.Cost, "evidence": r.Evidence, "recommendation": r.Recommendation, "busy": r.Busy}
}

// value is the row as a Starlark struct (verdict.row).
func (r DecisionRow) value() starlark.Value {
	d := starlark.StringDict{}
	for k, v := range r.fields() {
		d[k] = starlark.String(v.(string))
	}
	return starlarkstruct.FromStringDict(starlark.String("row"), d)
}

// rowColumns are the row's headings and cells, in the seeds' order.
func (r DecisionRow) columns() (heads, cells []string) {
	change := r.Change
	if r.Interval != "" {
		change += " (" + r.Interval + ")"
	}
	return []string{"Candidate", "Metric", "Before → After (index)", "Gain", "Cost / risk", "Evidence", "Recommendation"},
		[]string{r.Candidate, r.Metric, change, r.Gain, r.Cost, r.Evidence, strings.ToUpper(r.Recommendation)}
}

// rowHTML is the decision row as a one-row table.
func (v *Verdict) rowHTML() string {
	r := v.Row()
	var b strings.Builder
	b.WriteString(`<table class="decision"><caption>Verdict</caption><thead><tr>`)
	heads, _ := r.columns()
	for _, h := range heads {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
	}
	class := "none"
	if v.Headline != nil {
		class = verdictClass(v.Headline.Verdict)
	}
	fmt.Fprintf(&b, `</tr></thead><tbody><tr class="verdict-%s">`, class)
	fmt.Fprintf(&b, "<td>%s</td><td>", html.EscapeString(r.Candidate))
	if h := v.Headline; h != nil { // the name whole, the direction under it
		fmt.Fprintf(&b, `<b class="metric">%s</b><br><small>%s is better</small>`, html.EscapeString(h.Metric), html.EscapeString(h.Better))
	}
	b.WriteString("</td>")
	fmt.Fprintf(&b, `<td class="change"><b>%s</b>`, html.EscapeString(r.Change))
	if r.Interval != "" {
		fmt.Fprintf(&b, "<br><small>%s</small>", html.EscapeString(r.Interval))
	}
	fmt.Fprintf(&b, `</td><td class="gain">%s</td><td>%s</td><td>%s</td><td class="status"><strong>%s</strong></td>`,
		html.EscapeString(r.Gain), html.EscapeString(r.Cost), html.EscapeString(r.Evidence),
		html.EscapeString(strings.ToUpper(r.Recommendation)))
	b.WriteString("</tr></tbody></table>")
	return b.String()
}

// rowMarkdown is the decision row as a one-row Markdown table.
func (v *Verdict) rowMarkdown() string {
	heads, cells := v.Row().columns()
	var b strings.Builder
	b.WriteString("| " + strings.Join(heads, " | ") + " |\n|")
	for range heads {
		b.WriteString(" --- |")
	}
	for i := range cells {
		cells[i] = mdCell(cells[i])
	}
	b.WriteString("\n| " + strings.Join(cells, " | ") + " |\n")
	return b.String()
}

// mdCell is text safe inside a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// busyLines are the box's lines of the verdict's comparisons, once each:
// the headline's, then a secondary's only when it ran on other runs.
func (v *Verdict) busyLines() []string {
	var out []string
	add := func(c *Comparison) {
		if c != nil && c.Busy != "" && !containsString(out, c.Busy) {
			out = append(out, c.Busy)
		}
	}
	add(v.Headline)
	for _, c := range v.Secondary {
		add(c)
	}
	return out
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// detailSummary names what the verdict's detail holds.
func (v *Verdict) detailSummary() string {
	var parts []string
	if v.Headline != nil {
		parts = append(parts, fmt.Sprintf("%s: every run, per-pair ratios and the method", v.Headline.Metric))
	}
	if len(v.Secondary) > 0 {
		parts = append(parts, fmt.Sprintf("%d secondary comparisons", len(v.Secondary)))
	}
	if v.Equivalence != "" {
		parts = append(parts, "the arms' answers")
	}
	return "Detail: " + strings.Join(parts, "; ")
}

// secondaryHTML is the secondary comparisons as a table: one row each,
// their verdict as the record words it (Holm's adjustment said once, in
// the heading, not in brackets on every line).
func (v *Verdict) secondaryHTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<p class="secondary">%s</p><table class="secondary"><thead><tr><th>metric</th><th>before → after (index)</th><th>gain</th><th>verdict</th><th>p</th><th>Holm-adjusted p</th></tr></thead><tbody>`,
		html.EscapeString(v.secondaryHeading()))
	for _, c := range v.Secondary {
		fmt.Fprintf(&b, `<tr class="verdict-%s"><td>%s (%s is better)</td><td>%s (%s)</td><td class="num">%+.1f %%</td><td>%s</td><td class="num">%s</td><td class="num">%s</td></tr>`,
			verdictClass(c.Verdict), html.EscapeString(c.Metric), html.EscapeString(c.Better),
			html.EscapeString(c.BeforeAfter()), html.EscapeString(c.intervalWords()),
			c.GainPct, html.EscapeString(c.VerdictWords()), stats.Num(c.PValue), stats.Num(c.AdjustedP))
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// secondaryMarkdown is secondaryHTML's table in Markdown.
func (v *Verdict) secondaryMarkdown() string {
	var b strings.Builder
	b.WriteString(v.secondaryHeading() + "\n\n| metric | before → after (index) | gain | verdict | p | Holm-adjusted p |\n| --- | --- | ---: | --- | ---: | ---: |\n")
	for _, c := range v.Secondary {
		fmt.Fprintf(&b, "| %s (%s is better) | %s (%s) | %+.1f %% | %s | %s | %s |\n", mdCell(c.Metric), c.Better,
			c.BeforeAfter(), c.intervalWords(), c.GainPct, c.VerdictWords(), stats.Num(c.PValue), stats.Num(c.AdjustedP))
	}
	return b.String()
}

// verdictInCell is the verdict where the cell that made it shows it: its
// decision row, and a link to the whole verdict at the top of the record,
// so the record does not say it all twice.
type verdictInCell struct{ *Verdict }

var _ starlark.Value = verdictInCell{}

func (v verdictInCell) HTML() string {
	return `<div class="verdict-row">` + v.rowHTML() +
		`<p class="see"><a href="#verdict">The verdict in full, with its detail, opens the record.</a></p></div>`
}

func (v verdictInCell) Markdown() string {
	return v.rowMarkdown() + "\n_The verdict in full opens the record._\n"
}
