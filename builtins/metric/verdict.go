package metric

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"html"
	"slices"
	"strings"

	"go.starlark.net/starlark"

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
}

func init() {
	codec.Register("verdict", func(data []byte) (starlark.Value, error) {
		var v Verdict
		if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&v); err != nil {
			return nil, fmt.Errorf("verdict: %w", err)
		}
		return &v, nil
	})
}

// verdictBuiltin implements verdict(status, headline = None, summary = "").
func verdictBuiltin(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var status, summary string
	var headline starlark.Value = starlark.None
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs,
		"status", &status, "headline?", &headline, "summary?", &summary); err != nil {
		return nil, err
	}
	if !slices.Contains(statuses, status) {
		return nil, fmt.Errorf("verdict: status must be one of %q, got %q", statuses, status)
	}
	v := &Verdict{Status: status, Summary: summary}
	switch h := headline.(type) {
	case starlark.NoneType:
	case *Comparison:
		v.Headline = h
	default:
		return nil, fmt.Errorf("verdict: headline must be a comparison, got %s", headline.Type())
	}
	runtime.Emit(thread, v)
	return v, nil
}

func (v *Verdict) Type() string          { return "verdict" }
func (v *Verdict) Freeze()               {}
func (v *Verdict) Truth() starlark.Bool  { return true }
func (v *Verdict) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: verdict") }
func (v *Verdict) AttrNames() []string   { return []string{"headline", "status", "summary"} }

func (v *Verdict) String() string {
	return fmt.Sprintf("verdict(%s: %s)", v.Status, v.line())
}

// line is the headline sentence and the summary, whichever exist.
func (v *Verdict) line() string {
	var parts []string
	if v.Summary != "" {
		parts = append(parts, v.Summary)
	}
	if v.Headline != nil {
		parts = append(parts, v.Headline.Sentence())
	}
	return strings.Join(parts, " — ")
}

func (v *Verdict) Attr(name string) (starlark.Value, error) {
	switch name {
	case "status":
		return starlark.String(v.Status), nil
	case "summary":
		return starlark.String(v.Summary), nil
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

func (v *Verdict) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Verdict: %s.**", strings.ToUpper(v.Status))
	if v.Summary != "" {
		fmt.Fprintf(&b, " %s", v.Summary)
	}
	b.WriteString("\n")
	if v.Headline != nil {
		b.WriteString("\n" + v.Headline.Markdown())
	}
	return b.String()
}

func (v *Verdict) HTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="verdict status-%s"><p><strong>Verdict: %s.</strong> %s</p>`,
		strings.ReplaceAll(v.Status, " ", "-"), html.EscapeString(strings.ToUpper(v.Status)), html.EscapeString(v.Summary))
	if v.Headline != nil {
		b.WriteString(v.Headline.HTML())
	}
	b.WriteString("</div>")
	return b.String()
}

func (v *Verdict) JSON() any {
	out := map[string]any{"type": "verdict", "status": v.Status, "summary": v.Summary}
	if v.Headline != nil {
		out["headline"] = v.Headline.JSON()
	}
	return out
}
