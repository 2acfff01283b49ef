package metric

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"html"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Statuses a notebook's decision can take.
var statuses = []string{"kept", "reverted", "no effect", "open", "discarded", "inconclusive"}

// Verdict is a notebook's decision: a status, the comparison it rests on
// and a sentence. The engine puts it at the top of the record.
type Verdict struct {
	Status   string
	Summary  string
	Headline *Comparison // nil when the decision rests on no single comparison
	// Equivalence is what the decision knows of the arms' answers: the
	// summary of a passing equivalent(...) check, or "not checked: " and
	// the notebook's reason. "kept" needs one or the other.
	Equivalence string
	// Override is the notebook's reason for keeping a change whose headline
	// does not say what the change aims for (override = "why"); the record
	// shows it.
	Override string
	// Aim is the way the change is meant to move the headline metric,
	// "higher" or "lower", when the notebook says (aim = ...); "" means
	// the metric's own better. A change that aims against it (a rate
	// limiter lowering rps) is kept on a headline that says WORSENS.
	Aim string
	// Secondary are the notebook's other comparisons with their adjusted
	// verdicts, set on the record's copy by the record pass (family.go).
	Secondary []*Comparison
	// Risk is what the change costs or risks that no comparison measures
	// (risk = "schema change: needs a migration"): the decision row's
	// "cost / risk" beside the secondary comparisons that worsen.
	Risk string
}

func decodeVerdict(data []byte, _ codec.Types) (starlark.Value, error) {
	var v Verdict
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&v); err != nil {
		return nil, fmt.Errorf("verdict: %w", err)
	}
	return &v, nil
}

// verdictBuiltin implements
// verdict(status, headline = None, summary = "", equivalence = None, require_accepted = False, override = "", aim = None, risk = "").
func verdictBuiltin(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var status, summary, override, aim, risk string
	var headline, equivalence starlark.Value = starlark.None, starlark.None
	var requireAccepted bool
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs,
		"status", &status, "headline?", &headline, "summary?", &summary, "equivalence?", &equivalence,
		"require_accepted?", &requireAccepted, "override?", &override, "aim?", &aim, "risk?", &risk); err != nil {
		return nil, err
	}
	if !slices.Contains(statuses, status) {
		return nil, fmt.Errorf("verdict: status must be one of %q, got %q", statuses, status)
	}
	v := &Verdict{Status: status, Summary: summary, Risk: strings.TrimSpace(risk)}
	switch h := headline.(type) {
	case starlark.NoneType:
	case *Comparison:
		v.Headline = h
	default:
		return nil, fmt.Errorf("verdict: headline must be a comparison, got %s", headline.Type())
	}
	if err := setAim(v, aim); err != nil {
		return nil, err
	}
	if err := checkAccepted(v, requireAccepted); err != nil {
		return nil, err
	}
	eq, err := equivalenceOf(equivalence, status == "kept")
	if err != nil {
		return nil, err
	}
	v.Equivalence = eq
	if err := checkHeadline(v, strings.TrimSpace(override)); err != nil {
		return nil, err
	}
	recordMethod(thread)
	runtime.Emit(thread, v)
	return v, nil
}

// checkAccepted holds "kept" to the seeds' acceptance rule when the
// notebook asks for it: the statistical verdict no longer includes that
// rule, so a team that keeps changes only when every B beats every A says
// so here.
func checkAccepted(v *Verdict, require bool) error {
	if !require || v.Status != "kept" {
		return nil
	}
	if v.Headline == nil {
		return fmt.Errorf("verdict: require_accepted needs a headline comparison")
	}
	if v.againstBetter() {
		return fmt.Errorf("verdict: require_accepted judges the seeds' rule in %s's own direction (%s); with aim = %q compare with better = %q instead",
			v.Headline.Metric, v.Headline.Better, v.Aim, v.Aim)
	}
	if !v.Headline.Accepted {
		return fmt.Errorf("verdict: status \"kept\" with require_accepted, but the headline is %s", v.Headline.Acceptance)
	}
	return nil
}

// setAim reads aim: the way the change is meant to move the headline
// metric. It needs a headline; the metric's own better is the default.
func setAim(v *Verdict, aim string) error {
	if aim == "" {
		return nil
	}
	if aim != "higher" && aim != "lower" {
		return fmt.Errorf("verdict: aim must be \"higher\" or \"lower\", got %q", aim)
	}
	if v.Headline == nil {
		return fmt.Errorf("verdict: aim needs headline = the comparison whose metric the change aims to move")
	}
	v.Aim = aim
	return nil
}

// againstBetter reports whether the change aims to move its headline metric
// the way the metric is worse (aim = "lower" for rps).
func (v *Verdict) againstBetter() bool {
	return v.Aim != "" && v.Headline != nil && v.Aim != v.Headline.Better
}

// aimed is the headline verdict a kept change needs: IMPROVES, or WORSENS
// when it aims against its metric's better.
func (v *Verdict) aimed() string {
	if v.againstBetter() {
		return "WORSENS"
	}
	return "IMPROVES"
}

// checkHeadline holds "kept" to its headline: a decision to keep a change
// rests on the comparison it names, so that comparison must say IMPROVES,
// or WORSENS for a change the notebook names as aiming the other way
// (aim = "lower" for a rate limiter's rps) (issue 32). A notebook that
// keeps a change for another reason (a robustness fix that costs a
// little, a change kept for its memory while its headline is throughput)
// says why in override, which the record shows beside the verdict.
func checkHeadline(v *Verdict, override string) error {
	if v.Status != "kept" {
		if override != "" {
			return fmt.Errorf("verdict: override explains keeping a change whose headline does not improve; status is %q", v.Status)
		}
		return nil
	}
	v.Override = override
	if override != "" {
		return nil
	}
	if v.Headline == nil {
		return fmt.Errorf(`verdict: status "kept" needs headline = the comparison the decision rests on, and it must say IMPROVES; override = "why" keeps the change for another reason`)
	}
	if want := v.aimed(); v.Headline.Verdict != want {
		why := ""
		if v.Headline.Reason != "" {
			why = " (" + v.Headline.Reason + ")"
		}
		if v.againstBetter() {
			return fmt.Errorf(`verdict: status "kept" aims to %s %s, but the headline says %s%s, not %s; override = "why" keeps it for another reason, shown in the record`,
				aimVerb(v.Aim), v.Headline.Metric, v.Headline.Verdict, why, want)
		}
		return fmt.Errorf(`verdict: status "kept" but the headline %s says %s%s, not IMPROVES; override = "why" keeps it for another reason, shown in the record`,
			v.Headline.Metric, v.Headline.Verdict, why)
	}
	return nil
}

func aimVerb(aim string) string {
	if aim == "lower" {
		return "lower"
	}
	return "raise"
}

// aimLine says, for a change that aims against its headline metric's
// better, that the headline's WORSENS is the aim, so a reader of the record
// does not take it for a mistake.
func (v *Verdict) aimLine() string {
	if !v.againstBetter() {
		return ""
	}
	s := fmt.Sprintf("The change aims to %s %s (better %s): its headline says %s", aimVerb(v.Aim), v.Headline.Metric, v.Headline.Better, v.Headline.Verdict)
	if v.Headline.Verdict == v.aimed() {
		return s + ", the aim."
	}
	return s + ", not the aim."
}

// equivalenceOf reads verdict's equivalence argument: the value of
// equivalent(...), or a string saying why the arms cannot answer
// differently. A kept change must not change answers, so for "kept" a
// missing, failed or vacuous check is an error.
func equivalenceOf(v starlark.Value, kept bool) (string, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		if kept {
			return "", fmt.Errorf(`verdict: status "kept" needs an equivalence check: equivalence = equivalent(answers_a, answers_b), or a string saying why the arms cannot answer differently`)
		}
		return "", nil
	case starlark.String:
		if strings.TrimSpace(string(x)) == "" {
			return "", fmt.Errorf("verdict: equivalence is an empty string; say why no check is needed")
		}
		return "not checked: " + string(x), nil
	case *starlarkstruct.Struct:
		if x.Constructor() != starlark.String("equivalence") {
			break
		}
		return checkedEquivalence(x, kept)
	}
	return "", fmt.Errorf("verdict: equivalence must be the value of equivalent(...) or a string, got %s", v.Type())
}

func checkedEquivalence(x *starlarkstruct.Struct, kept bool) (string, error) {
	attr := func(name string) starlark.Value {
		v, _ := x.Attr(name)
		return v
	}
	summary, _ := starlark.AsString(attr("summary"))
	if !kept {
		return summary, nil
	}
	if attr("ok") != starlark.True {
		return "", fmt.Errorf("verdict: status \"kept\" rests on arms that answer differently: %s; %s",
			summary, strings.Join(stringsOf(attr("mismatches")), "; "))
	}
	if attr("vacuous") == starlark.True {
		return "", fmt.Errorf("verdict: status \"kept\" rests on a vacuous equivalence check (%s): it proves nothing", summary)
	}
	return summary, nil
}

func (v *Verdict) Type() string          { return "verdict" }
func (v *Verdict) Freeze()               {}
func (v *Verdict) Truth() starlark.Bool  { return true }
func (v *Verdict) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: verdict") }

// CompareSameType: two verdicts are equal when they say the same, headline
// comparison included (what they store).
func (v *Verdict) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualStored(op, v, y.(*Verdict))
}
func (v *Verdict) AttrNames() []string {
	return []string{"aim", "equivalence", "headline", "override", "risk", "row", "status", "summary"}
}

func (v *Verdict) String() string {
	return fmt.Sprintf("verdict(%s: %s)", v.Status, v.line())
}

// equivalenceLine is the equivalence the decision rests on, for the record.
func (v *Verdict) equivalenceLine() string {
	if v.Equivalence == "" {
		return ""
	}
	return "Equivalence of the arms' answers: " + v.Equivalence + "."
}

// line is the headline sentence and the summary, whichever exist.
func (v *Verdict) line() string {
	var parts []string
	if v.Summary != "" {
		parts = append(parts, v.Summary)
	}
	if v.Headline != nil {
		parts = append(parts, v.Headline.Line())
	}
	return strings.Join(parts, " — ")
}

// overrideLine is why a change was kept without an improving headline.
func (v *Verdict) overrideLine() string {
	if v.Override == "" {
		return ""
	}
	said := "no headline"
	if v.Headline != nil {
		said = "its headline says " + v.Headline.Verdict
	}
	return fmt.Sprintf("Kept although %s, because: %s", said, v.Override)
}

// secondaryHeading introduces the other comparisons under the headline.
func (v *Verdict) secondaryHeading() string {
	return fmt.Sprintf("Secondary comparisons (%d), each judged on its Holm-adjusted p over them; the decision rests on the headline:", len(v.Secondary))
}

func (v *Verdict) Attr(name string) (starlark.Value, error) {
	switch name {
	case "status":
		return starlark.String(v.Status), nil
	case "summary":
		return starlark.String(v.Summary), nil
	case "equivalence":
		return starlark.String(v.Equivalence), nil
	case "override":
		return starlark.String(v.Override), nil
	case "aim":
		return starlark.String(v.Aim), nil
	case "risk":
		return starlark.String(v.Risk), nil
	case "row":
		return v.Row().value(), nil
	case "headline":
		if v.Headline == nil {
			return starlark.None, nil
		}
		return v.Headline, nil
	}
	return nil, nil
}

// MarshalValue stores the verdict with its headline comparison.
func (v *Verdict) MarshalValue() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("verdict: %w", err)
	}
	return buf.Bytes(), nil
}

// Markdown opens with the decision row, then what the reader must see
// beside it (why a change is kept against its headline, the box's
// business); the rest is MarkdownDetail's, which the Markdown record puts
// one click away.
func (v *Verdict) Markdown() string {
	var b strings.Builder
	b.WriteString(v.rowMarkdown())
	for _, line := range v.notes() {
		b.WriteString("\n" + line + "\n")
	}
	for _, w := range v.busyLines() {
		b.WriteString("\n> ⚠ " + w + "\n")
	}
	if v.Headline != nil {
		b.WriteString(v.Headline.warningsMarkdown(true))
	}
	return b.String()
}

// MarkdownDetail is the verdict's detail: the arms' answers, the headline's
// runs and method, the secondary comparisons.
func (v *Verdict) MarkdownDetail() (summary, body string) {
	var b strings.Builder
	if eq := v.equivalenceLine(); eq != "" {
		b.WriteString(eq + "\n\n")
	}
	if v.Headline != nil {
		b.WriteString(v.Headline.detailMarkdown() + "\n")
	}
	if len(v.Secondary) > 0 {
		b.WriteString(v.secondaryMarkdown())
	}
	return v.detailSummary(), b.String()
}

// notes are the lines the decision row needs beside it: why a change is
// kept without an improving headline, the aim against the metric's better.
func (v *Verdict) notes() []string {
	var out []string
	if o := v.overrideLine(); o != "" {
		out = append(out, "**"+o+"**")
	}
	if a := v.aimLine(); a != "" {
		out = append(out, a)
	}
	return out
}

// HTML opens with the decision row; the box's business is one line under
// it; the headline's runs, method and the secondary comparisons are in a
// <details> block (issue 52: the verdict was a wall of warnings and
// bracketed text before its numbers).
func (v *Verdict) HTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="verdict status-%s">`, strings.ReplaceAll(v.Status, " ", "-"))
	b.WriteString(v.rowHTML())
	if o := v.overrideLine(); o != "" {
		fmt.Fprintf(&b, `<p class="override"><strong>%s</strong></p>`, html.EscapeString(o))
	}
	if a := v.aimLine(); a != "" {
		fmt.Fprintf(&b, `<p class="aim">%s</p>`, html.EscapeString(a))
	}
	for _, w := range v.busyLines() {
		fmt.Fprintf(&b, `<p class="warn busy">⚠ %s</p>`, html.EscapeString(w))
	}
	if v.Headline != nil {
		b.WriteString(v.Headline.warningsHTML(true))
	}
	fmt.Fprintf(&b, `<details class="detail"><summary>%s</summary>`, html.EscapeString(v.detailSummary()))
	if eq := v.equivalenceLine(); eq != "" {
		fmt.Fprintf(&b, `<p class="equivalence">%s</p>`, html.EscapeString(eq))
	}
	if v.Headline != nil {
		b.WriteString(v.Headline.detailHTML())
	}
	if len(v.Secondary) > 0 {
		b.WriteString(v.secondaryHTML())
	}
	b.WriteString("</details></div>")
	return b.String()
}

// JSON is every field, the decision row and the headline's and secondary
// comparisons' own JSON.
func (v *Verdict) JSON() any {
	out := map[string]any{"type": "verdict", "status": v.Status, "summary": v.Summary, "equivalence": v.Equivalence,
		"override": v.Override, "aim": v.Aim, "risk": v.Risk, "row": v.Row().fields()}
	if v.Headline != nil {
		out["headline"] = v.Headline.JSON()
	}
	if len(v.Secondary) > 0 {
		var sec []any
		for _, c := range v.Secondary {
			sec = append(sec, c.JSON())
		}
		out["secondary"] = sec
	}
	return out
}

func stringsOf(v starlark.Value) []string {
	var out []string
	if it, ok := v.(starlark.Iterable); ok {
		for x := range starlark.Elements(it) {
			s, _ := starlark.AsString(x)
			out = append(out, s)
		}
	}
	return out
}
