package metric

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"html"
	"math"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/metric/capacity"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Capacity is a finished capacity search as a Starlark value of type
// "capacity": the highest load that met the SLO, its interval, every run
// with its level and verdict, and the unit of the load, so that
// compare(exp, metric = "capacity") over abab runs of capacity(...) reads
// each pair's figure and the record says "capacity 8 -> 16 users".
type Capacity struct {
	capacity.Result
	Limits     []capacity.Limit
	Unit       string // "users", "req/s", or "" when the runs did not say
	Label      string
	Integer    bool // whole levels
	Confidence float64
	Lo, Hi     float64
	runs       []starlark.Value // each point's run, as Points
}

var (
	_ starlark.HasAttrs = (*Capacity)(nil)
	_ codec.Marshaler   = (*Capacity)(nil)
)

func (c *Capacity) Type() string          { return "capacity" }
func (c *Capacity) Freeze()               {}
func (c *Capacity) Truth() starlark.Bool  { return true }
func (c *Capacity) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: capacity") }
func (c *Capacity) String() string        { return "capacity(" + c.Sentence() + ")" }

// CompareSameType: two capacities are equal when they store alike.
func (c *Capacity) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualStored(op, c, y.(*Capacity))
}

// Valid says whether the search found the crossing inside its range.
func (c *Capacity) Valid() bool { return c.Status == capacity.OK }

var capacityAttrs = []string{"capacity", "confidence", "interval", "invalid_reason", "label", "levels", "limiting", "limits",
	"method", "n_runs", "points", "reason", "seconds", "sentence", "slo", "status", "unit", "valid", "value", "warnings"}

func (c *Capacity) AttrNames() []string { return capacityAttrs }

func (c *Capacity) Attr(name string) (starlark.Value, error) {
	switch name {
	case "value", "capacity":
		return c.loadOrNone(c.Value), nil
	case "interval":
		return starlark.Tuple{c.loadOrNone(c.Low), c.loadOrNone(c.High)}, nil
	case "unit":
		return starlark.String(c.Unit), nil
	case "label":
		return starlark.String(c.Label), nil
	case "limiting":
		return starlark.String(c.Limiting), nil
	case "status":
		return starlark.String(c.Status), nil
	case "reason", "invalid_reason":
		return starlark.String(c.Reason), nil
	case "valid":
		return starlark.Bool(c.Valid()), nil
	case "confidence":
		return starlark.Float(c.Confidence), nil
	case "n_runs":
		return starlark.MakeInt(len(c.Points)), nil
	case "seconds":
		return starlark.Float(c.seconds()), nil
	case "sentence":
		return starlark.String(c.Sentence()), nil
	case "method":
		return starlark.String(c.methodLine()), nil
	case "warnings":
		return starval.StringList(c.Warnings), nil
	case "slo":
		d := starlark.NewDict(len(c.Limits))
		for _, l := range c.Limits {
			_ = d.SetKey(starlark.String(l.Metric), starlark.Float(l.Value))
		}
		return d, nil
	case "limits":
		var out []string
		for _, l := range c.Limits {
			out = append(out, l.String())
		}
		return starval.StringList(out), nil
	case "points":
		return c.pointList(), nil
	case "levels":
		return c.levelList(), nil
	}
	return nil, nil
}

// load is a level as the notebook's run takes it: an int for whole levels.
func (c *Capacity) load(x float64) starlark.Value {
	if c.Integer {
		return starlark.MakeInt64(int64(x))
	}
	return starlark.Float(x)
}

func (c *Capacity) loadOrNone(x float64) starlark.Value {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return starlark.None
	}
	return c.load(x)
}

// figures are a reading's values by limit.
func (c *Capacity) figures(values []float64) *starlark.Dict {
	d := starlark.NewDict(len(values))
	for i, x := range values {
		_ = d.SetKey(starlark.String(c.Limits[i].Metric), starlark.Float(x))
	}
	return d
}

func (c *Capacity) pointList() *starlark.List {
	out := make([]starlark.Value, len(c.Points))
	for i, p := range c.Points {
		var run starlark.Value = starlark.None
		if i < len(c.runs) {
			run = c.runs[i]
		}
		out[i] = starlarkstruct.FromStringDict(starlark.String("point"), starlark.StringDict{
			"level": c.load(p.Level), "repeat": starlark.MakeInt(p.Repeat), "run": run, "passed": starlark.Bool(p.Pass),
			"busy": starlark.Bool(p.Reading.Busy), "gen_bound": starlark.Bool(p.Reading.GenBound != ""),
			"figures": c.figures(p.Reading.Values), "phase": starlark.String(p.Phase), "seconds": starlark.Float(p.Reading.Seconds),
		})
	}
	return starlark.NewList(out)
}

func (c *Capacity) levelList() *starlark.List {
	out := make([]starlark.Value, len(c.Levels))
	for i, l := range c.Levels {
		out[i] = starlarkstruct.FromStringDict(starlark.String("level"), starlark.StringDict{
			"level": c.load(l.Load), "runs": starlark.MakeInt(l.Runs), "passes": starlark.MakeInt(l.Passes),
			"judged": starlark.String(l.Judged), "median": c.figures(l.Median), "busy": starlark.MakeInt(l.Busy),
		})
	}
	return starlark.NewList(out)
}

func (c *Capacity) seconds() float64 {
	s := 0.0
	for _, p := range c.Points {
		s += p.Reading.Seconds
	}
	return s
}

// loadText is a level with the unit: "9 users", "1,250 req/s".
func (c *Capacity) loadText(x float64) string {
	s := g(x)
	if c.Unit != "" {
		s += " " + c.Unit
	}
	return s
}

// sloText is the SLO in words: "p99 ≤ 50, error_rate ≤ 0.001".
func (c *Capacity) sloText() string {
	var parts []string
	for _, l := range c.Limits {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, ", ")
}

// Sentence is what the search found, in one line.
func (c *Capacity) Sentence() string {
	what := "capacity"
	if c.Label != "" {
		what = c.Label + ": capacity"
	}
	runs := fmt.Sprintf("%d runs at %d levels", len(c.Points), len(c.Levels))
	switch c.Status {
	case capacity.OK:
		s := fmt.Sprintf("%s %s at %s (%.0f %% interval %s to %s)", what, c.loadText(c.Value), c.sloText(), 100*c.Confidence, g(c.Low), g(c.High))
		if c.Limiting != "" {
			s += "; " + c.Limiting + " broke first"
		}
		return s + "; " + runs
	case capacity.Above, capacity.Below:
		return fmt.Sprintf("%s not found in %s to %s at %s: %s; %s", what, g(c.Lo), c.loadText(c.Hi), c.sloText(), c.Reason, runs)
	}
	return fmt.Sprintf("%s refused at %s: %s; %s", what, c.sloText(), c.Reason, runs)
}

// methodLine says how the value and its interval were found.
func (c *Capacity) methodLine() string {
	return fmt.Sprintf("Method: one run per level stepping up from %s (each level %s times the last) until the SLO broke, then bisection to adjacent levels; "+
		"a level meets the SLO when its runs meet every limit more often than not; each end of the interval is judged by a sequential sign test "+
		"on runs made after it was chosen, wrong with chance at most %.1f %% (exact, for a level of even odds), so the interval holds the capacity with at least %.0f %% confidence; "+
		"a level the repeats cannot judge widens the interval.", c.loadText(c.Lo), g(c.factor()), 100*c.Alpha, 100*c.Confidence)
}

// factor is the step-up's factor as the first points show it.
func (c *Capacity) factor() float64 {
	var steps []float64
	for _, p := range c.Points {
		if p.Phase == "step" {
			steps = append(steps, p.Level)
		}
	}
	if len(steps) >= 2 && steps[0] > 0 {
		return steps[1] / steps[0]
	}
	return 2
}

func (c *Capacity) figureHeads() []string {
	var out []string
	for _, l := range c.Limits {
		out = append(out, l.Metric+" (median)")
	}
	return out
}

// levelRows are the levels as a table: load, runs, met the SLO, judged,
// each limit's median figure, busy runs.
func (c *Capacity) levelRows() (head []string, rows [][]string) {
	head = append([]string{"load", "runs", "met the SLO", "judged"}, c.figureHeads()...)
	head = append(head, "busy")
	for _, l := range c.Levels {
		row := []string{c.loadText(l.Load), fmt.Sprint(l.Runs), fmt.Sprintf("%d of %d", l.Passes, l.Runs), orDash(l.Judged)}
		for _, m := range l.Median {
			row = append(row, g(m))
		}
		row = append(row, fmt.Sprint(l.Busy))
		rows = append(rows, row)
	}
	return head, rows
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func (c *Capacity) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", c.Sentence())
	head, rows := c.levelRows()
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat(" --- |", len(head)) + "\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	fmt.Fprintf(&b, "\n%s\n", c.methodLine())
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "\n- warning: %s", w)
	}
	if len(c.Warnings) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

func (c *Capacity) HTML() string {
	var b strings.Builder
	class := "ok"
	if !c.Valid() {
		class = "refused"
	}
	fmt.Fprintf(&b, `<div class="capacity capacity-%s"><p><strong>%s</strong></p><table><thead><tr>`, class, html.EscapeString(c.Sentence()))
	head, rows := c.levelRows()
	for _, h := range head {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, x := range r {
			fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(x))
		}
		b.WriteString("</tr>")
	}
	fmt.Fprintf(&b, `</tbody></table><p class="method">%s</p>`, html.EscapeString(c.methodLine()))
	if len(c.Warnings) > 0 {
		b.WriteString(`<ul class="warnings">`)
		for _, w := range c.Warnings {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(w))
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</div>")
	return b.String()
}

// JSON is the search's figures; each point's run by its own JSON where it
// has one.
func (c *Capacity) JSON() any {
	var points []any
	for _, p := range c.Points {
		points = append(points, map[string]any{"load": p.Level, "repeat": p.Repeat, "passed": p.Pass, "busy": p.Reading.Busy,
			"gen_bound": p.Reading.GenBound, "invalid": p.Reading.Invalid, "figures": jsonFloats(p.Reading.Values), "phase": p.Phase, "seconds": jf(p.Reading.Seconds)})
	}
	var limits []any
	for _, l := range c.Limits {
		op := ">="
		if l.Max {
			op = "<="
		}
		limits = append(limits, map[string]any{"metric": l.Metric, "op": op, "value": jf(l.Value)})
	}
	return map[string]any{"type": "capacity", "value": jf(c.Value), "interval": []any{jf(c.Low), jf(c.High)}, "unit": c.Unit,
		"label": c.Label, "status": c.Status, "reason": c.Reason, "limiting": c.Limiting, "confidence": c.Confidence,
		"alpha": jf(c.Alpha), "slo": limits, "points": points, "warnings": c.Warnings, "sentence": c.Sentence(), "lo": c.Lo, "hi": c.Hi}
}

// capacityStored is a capacity as the cache keeps it: gob of its figures
// (gob keeps NaN and infinities), its runs in the codec's encoding.
type capacityStored struct {
	Result     capacity.Result
	Limits     []capacity.Limit
	Unit       string
	Label      string
	Integer    bool
	Confidence float64
	Lo, Hi     float64
	Runs       []byte
}

func (c *Capacity) MarshalValue() ([]byte, error) {
	runs, err := codec.Encode(starlark.Tuple(c.runs))
	if err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	var buf bytes.Buffer
	err = gob.NewEncoder(&buf).Encode(capacityStored{Result: c.Result, Limits: c.Limits, Unit: c.Unit, Label: c.Label,
		Integer: c.Integer, Confidence: c.Confidence, Lo: c.Lo, Hi: c.Hi, Runs: runs})
	if err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	return buf.Bytes(), nil
}

func decodeCapacity(data []byte, types codec.Types) (starlark.Value, error) {
	var s capacityStored
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	v, err := codec.Decode(s.Runs, types)
	if err != nil {
		return nil, fmt.Errorf("capacity: runs: %w", err)
	}
	runs, _ := v.(starlark.Tuple)
	return &Capacity{Result: s.Result, Limits: s.Limits, Unit: s.Unit, Label: s.Label, Integer: s.Integer,
		Confidence: s.Confidence, Lo: s.Lo, Hi: s.Hi, runs: runs}, nil
}
