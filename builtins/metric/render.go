package metric

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"html"
	"math"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/fmtnum"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/stats"
)

func decodeComparison(data []byte, _ codec.Types) (starlark.Value, error) {
	var c Comparison
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&c); err != nil {
		return nil, fmt.Errorf("comparison: %w", err)
	}
	return &c, nil
}

// MarshalValue stores a comparison (gob keeps NaN and infinities).
func (c *Comparison) MarshalValue() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		return nil, fmt.Errorf("comparison: %w", err)
	}
	return buf.Bytes(), nil
}

// Text bars as in the seeds: 16 blocks are 100, one line per comparison.
const (
	barScale = 16 // blocks for index 100
	barMax   = 40 // longer bars are cut and end in an arrow
)

// Bar draws an index value: "██████████ 61"; a bar past the scale ends in
// ▶, a bar of less than one block is ▏.
func Bar(index float64) string {
	n := int(math.Round(index * barScale / 100))
	switch {
	case n <= 0:
		return "▏"
	case n > barMax:
		return strings.Repeat("█", barMax) + "▶"
	}
	return strings.Repeat("█", n)
}

// barIndex is an index for a text bar: its value and how it is printed.
type barIndex struct {
	Value float64
	Text  string
}

// shownBar is a comparison's index as its record shows it (stats.Shown:
// "0.190", "100.6"), so the bar prints the figure the sentence and its
// interval print.
func shownBar(sh stats.Shown) barIndex { return barIndex{sh.Value(), sh.Index} }

// BarLine is "before ████████████████ 100 | after ██████████ 61".
func BarLine(index barIndex) string {
	return fmt.Sprintf("before %s 100 | after %s %s", Bar(100), Bar(index.Value), index.Text)
}

// Markdown is the sentence, the bars, the box's line and the warnings a
// reader must see; MarkdownDetail is the rest.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n```text\n%s  %s\n```\n", c.Line(), c.Metric, BarLine(shownBar(c.Shown())))
	if c.Busy != "" {
		fmt.Fprintf(&b, "\n> ⚠ %s\n", c.Busy)
	}
	b.WriteString(c.warningsMarkdown(true))
	return b.String()
}

// warningsMarkdown is warningsHTML's Markdown: beside the sentence
// (shown), up to shownWarnings warnings or their count; in the detail
// (!shown), all of them when they were counted.
func (c *Comparison) warningsMarkdown(shown bool) string {
	ws := c.otherWarnings()
	var b strings.Builder
	switch few := len(ws) <= shownWarnings; {
	case len(ws) == 0:
	case shown && !few:
		fmt.Fprintf(&b, "\n- warning: %d warnings on the runs, listed in the detail\n", len(ws))
	case shown == few: // beside the sentence when few, in the detail when counted
		writeWarningsMarkdown(&b, ws)
	}
	return b.String()
}

// MarkdownDetail is the runs, the per-pair ratios and the method, and the
// warnings when there are too many to show beside the sentence.
func (c *Comparison) MarkdownDetail() (summary, body string) {
	var b strings.Builder
	b.WriteString(c.runsMarkdown())
	b.WriteString(c.warningsMarkdown(false))
	return "every run, per-pair ratios and the method", b.String()
}

// detailMarkdown is the comparison whole, for a verdict's detail.
func (c *Comparison) detailMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n```text\n%s  %s\n```\n\n", c.Line(), c.Metric, BarLine(shownBar(c.Shown())))
	b.WriteString(c.runsMarkdown())
	b.WriteString(c.warningsMarkdown(false))
	return b.String()
}

// runsMarkdown is both arms' runs, the pair ratios and the method.
func (c *Comparison) runsMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| arm | geometric mean | median | min | max | runs |\n| --- | ---: | ---: | ---: | ---: | --- |\n")
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdCell(c.ALabel), g(c.GeoMeanA), g(c.MedianA), g(c.MinA), g(c.MaxA), joinG(c.A))
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n\n", mdCell(c.BLabel), g(c.GeoMeanB), g(c.MedianB), g(c.MinB), g(c.MaxB), joinG(c.B))
	if c.Paired {
		fmt.Fprintf(&b, "per-pair %s/%s: %s\n\n", c.BLabel, c.ALabel, joinG(c.Ratios))
	}
	b.WriteString(c.methodLine() + "\n")
	return b.String()
}

func writeWarningsMarkdown(b *strings.Builder, ws []string) {
	for _, w := range ws {
		fmt.Fprintf(b, "\n- warning: %s", w)
	}
	if len(ws) > 0 {
		b.WriteString("\n")
	}
}

// shownWarnings is how many of a comparison's warnings show beside its
// sentence; more are counted there and listed in the detail, so sixteen
// runs' warnings do not bury the numbers.
const shownWarnings = 2

// otherWarnings are the warnings the box's line does not already carry.
func (c *Comparison) otherWarnings() []string {
	var out []string
	for _, w := range c.Warnings {
		if w != c.Busy {
			out = append(out, w)
		}
	}
	return out
}

// HTML is the sentence, the bars, the box's line and the warnings a reader
// must see; both arms' runs, the per-pair ratios and the method are one
// click away.
func (c *Comparison) HTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="comparison verdict-%s"><p><strong>%s</strong></p>`, verdictClass(c.Verdict), html.EscapeString(c.Line()))
	fmt.Fprintf(&b, `<pre class="bars">%s  %s</pre>`, html.EscapeString(c.Metric), html.EscapeString(BarLine(shownBar(c.Shown()))))
	if c.Busy != "" {
		fmt.Fprintf(&b, `<p class="warn busy">⚠ %s</p>`, html.EscapeString(c.Busy))
	}
	b.WriteString(c.warningsHTML(true))
	b.WriteString(`<details class="detail"><summary>every run, per-pair ratios and the method</summary>`)
	b.WriteString(c.runsHTML())
	b.WriteString(c.warningsHTML(false))
	b.WriteString("</details></div>")
	return b.String()
}

// detailHTML is the comparison whole, without its box's line (the verdict
// shows that once): for a verdict's detail.
func (c *Comparison) detailHTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="comparison verdict-%s"><p><strong>%s</strong></p>`, verdictClass(c.Verdict), html.EscapeString(c.Line()))
	fmt.Fprintf(&b, `<pre class="bars">%s  %s</pre>`, html.EscapeString(c.Metric), html.EscapeString(BarLine(shownBar(c.Shown()))))
	b.WriteString(c.runsHTML())
	b.WriteString(c.warningsHTML(false))
	b.WriteString("</div>")
	return b.String()
}

// warningsHTML: beside the sentence (shown), up to shownWarnings warnings,
// or their count; in the detail (!shown), all of them when they were
// counted.
func (c *Comparison) warningsHTML(shown bool) string {
	ws := c.otherWarnings()
	switch {
	case len(ws) == 0:
		return ""
	case shown && len(ws) > shownWarnings:
		return fmt.Sprintf(`<p class="warn">⚠ %d warnings on the runs, listed in the detail</p>`, len(ws))
	case shown != (len(ws) <= shownWarnings):
		return ""
	case shown:
		var b strings.Builder
		for _, w := range ws {
			fmt.Fprintf(&b, `<p class="warn">⚠ %s</p>`, html.EscapeString(w))
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString(`<ul class="warnings">`)
	for _, w := range ws {
		fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(w))
	}
	b.WriteString("</ul>")
	return b.String()
}

// runsHTML is both arms' runs, the pair ratios and the method.
func (c *Comparison) runsHTML() string {
	var b strings.Builder
	b.WriteString(`<table><thead><tr><th>arm</th><th>geometric mean</th><th>mean</th><th>median</th><th>min</th><th>max</th><th>runs</th></tr></thead><tbody>`)
	row := func(label string, gm, m, med, lo, hi float64, xs []float64) {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
			html.EscapeString(label), g(gm), g(m), g(med), g(lo), g(hi), html.EscapeString(joinG(xs)))
	}
	row(c.ALabel, c.GeoMeanA, c.MeanA, c.MedianA, c.MinA, c.MaxA, c.A)
	row(c.BLabel, c.GeoMeanB, c.MeanB, c.MedianB, c.MinB, c.MaxB, c.B)
	b.WriteString("</tbody></table>")
	if c.Paired {
		fmt.Fprintf(&b, "<p>per-pair %s/%s: %s</p>", html.EscapeString(c.BLabel), html.EscapeString(c.ALabel), html.EscapeString(joinG(c.Ratios)))
	}
	fmt.Fprintf(&b, `<p class="method">%s</p>`, html.EscapeString(c.methodLine()))
	return b.String()
}

// methodLine says what was computed, so a reader of the record need not
// know the tool: the design, the estimate, how its interval was made, the
// test.
func (c *Comparison) methodLine() string {
	est := "the median of the pairwise differences of the logs (two-sample Hodges-Lehmann)"
	test := "two-sided exact Mann-Whitney U (ties included)"
	if c.Paired {
		est = "the median of the Walsh averages of the log pair ratios (Hodges-Lehmann), in which a drift shared by a pair cancels"
		test = "two-sided exact Wilcoxon signed-rank (ties and zero pairs conditioned on)"
	}
	return fmt.Sprintf("Method: %s; index = 100 × exp(%s); %.0f %% interval, in index units: %s; p: %s; IMPROVES/WORSENS needs p ≤ %g and an interval that excludes 100%s. Seeds' rule: %s.",
		c.Design(), est, 100*c.Confidence(), c.ciMethod(), test, c.Alpha, c.minEffectWords(), c.Acceptance)
}

func (c *Comparison) minEffectWords() string {
	if c.MinEffect == 0 {
		return ""
	}
	return fmt.Sprintf(" and a gain of at least %g %%", 100*c.MinEffect)
}

func verdictClass(v string) string {
	switch v {
	case "IMPROVES":
		return "improves"
	case "WORSENS":
		return "worsens"
	}
	return "none"
}

// g formats a figure as the record's tables do (11,199 rather than 1.12e+04).
func g(x float64) string { return fmtnum.Float(x) }

func joinG(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = g(x)
	}
	return strings.Join(parts, ", ")
}

func (c *Comparison) fields() map[string]any {
	return map[string]any{
		"type": "comparison", "metric": c.Metric, "better": c.Better,
		"a_label": c.ALabel, "b_label": c.BLabel, "a": jsonFloats(c.A), "b": jsonFloats(c.B),
		"mean_a": jf(c.MeanA), "mean_b": jf(c.MeanB), "index": jf(c.Shown().Value()), "gain_pct": jf(c.GainPct),
		"ratio": jf(c.Ratio), "geomean_a": jf(c.GeoMeanA), "geomean_b": jf(c.GeoMeanB),
		"paired": c.Paired, "design": c.Design(), "ci_method": c.ciMethod(), "ci_none": c.CI.None,
		"ci_ratio": []any{jf(c.CI.Low), jf(c.CI.High)}, "ci_achieved": jf(c.CI.Achieved), "step": jf(c.CI.Step),
		"test": c.Test, "busy": c.Busy, "role": c.Role,
		"shown":    map[string]any{"index": c.Shown().Index, "low": c.Shown().Low, "high": c.Shown().High},
		"accepted": c.Accepted, "acceptance": c.Acceptance, "min_effect": jf(c.MinEffect),
		"ratios": jsonFloats(c.Ratios), "min_a": jf(c.MinA), "max_a": jf(c.MaxA),
		"min_b": jf(c.MinB), "max_b": jf(c.MaxB),
		"every_b_beats_every_a": c.EveryBBeatsEveryA, "aa_spread_pct": jf(c.AASpreadPct),
		"ci": []any{jf(100 * c.CI.Low), jf(100 * c.CI.High)}, "p_value": jf(c.PValue),
		"median_a": jf(c.MedianA), "median_b": jf(c.MedianB),
		"verdict": c.Verdict, "reason": c.Reason, "alpha": jf(c.Alpha), "spread_source": c.AASource,
		"sentence": c.Line(), "warnings": c.Warnings,
	}
}

// JSON is every field, with unknown figures (NaN, ±Inf) as null; a
// secondary comparison adds its adjusted p and its unadjusted verdict.
func (c *Comparison) JSON() any {
	out := c.fields()
	if c.Unit != "" {
		out["unit"] = c.Unit
	}
	if c.Role == "secondary" || c.Role == "family" {
		out["p_adjusted"], out["family"], out["verdict_unadjusted"] = jf(c.AdjustedP), c.Family, c.RawVerdict
	}
	return out
}

func jf(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

func jsonFloats(xs []float64) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = jf(x)
	}
	return out
}
