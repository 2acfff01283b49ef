package starprofile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/flame"
	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// Why is the method of a comparison and the reason for it, in words, for
// the record and the docs (docs/guides/profiles.md).
const Why = "Per function, its CPU per request in each run (its share of the targets' sampled CPU × that CPU / the run's successful requests, in µs), " +
	"then per pair the difference B - A, and a paired t on those differences: their mean is the estimate, with its interval and p. " +
	"Not compare()'s test: compare() takes the log of the ratio B/A, which a function absent from one arm (0 µs per request) does not have, " +
	"and its exact signed-rank test cannot reach p <= 0.05 with fewer than 6 pairs, nor the p <= 0.05/m that m functions need with any number of pairs a notebook runs. " +
	"Every function above the share of CPU below is one test of a family: Benjamini-Hochberg holds the false discovery rate across them, " +
	"and every interval is at the matching confidence (Benjamini-Yekutieli's false-coverage-rate intervals), so a verdict is given exactly when its interval excludes 0. " +
	"The spread of the differences is floored at one sample's worth of CPU per request, since a profile counts whole samples. " +
	"A function sampled in every run of one arm and in none of the other is decided on that evidence: the t interval of the arm where it is, widened by what the other arm's sampling could have missed (no sample in its runs bounds its cost there at -ln(α) over the samples it would have drawn per µs per request, Poisson), not by one sample of the costlier arm. " +
	"The t test takes the differences as roughly normal: one outlying pair widens the interval, it does not make a verdict."

// Options shape compare_profiles.
type Options struct {
	ALabel, BLabel string
	FDR            float64 // 0: profile.DefaultFDR
	MinShare       float64 // 0: profile.DefaultMinShare
}

// input is what a comparison stores: its runs' profiles and options, from
// which the comparison is computed again when read back.
type input struct {
	ALabel   string  `json:"a_label"`
	BLabel   string  `json:"b_label"`
	FDR      float64 `json:"fdr,omitempty"`
	MinShare float64 `json:"min_share,omitempty"`
	A        []*Data `json:"a"`
	B        []*Data `json:"b"`
}

// Comparison is compare_profiles(exp): per function, B against A in CPU
// per request across the pairs. Attributes: functions (ranked by the
// size of the change, the functions tested first), function(name),
// improves and worsens (the names with that verdict), a and b (each arm's
// runs merged, as profiles), a_label, b_label, pairs, method, why,
// multiplicity, fdr, min_share, warnings.
type Comparison struct {
	in   input
	d    *profile.Diff
	a, b *Value
}

var (
	_ starlark.HasAttrs = (*Comparison)(nil)
	_ codec.Marshaler   = (*Comparison)(nil)
	_ record.Downloader = (*Comparison)(nil)
	_ record.FigureSet  = (*Comparison)(nil)
	_ record.HTMLer     = (*Comparison)(nil)
	_ record.Markdowner = (*Comparison)(nil)
	_ record.JSONer     = (*Comparison)(nil)
)

// DecodeComparison rebuilds a stored comparison (type
// "profile_comparison"): the metric module gives it, as it gives
// compare_profiles.
func DecodeComparison(b []byte, _ codec.Types) (starlark.Value, error) {
	var in input
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("profile_comparison: %w", err)
	}
	return compare(in)
}

// Compare makes the comparison of the pairs (a[i], b[i]).
func Compare(a, b []*Data, o Options) (*Comparison, error) {
	return compare(input{ALabel: o.ALabel, BLabel: o.BLabel, FDR: o.FDR, MinShare: o.MinShare, A: a, B: b})
}

func compare(in input) (*Comparison, error) {
	ra, err := runs(in.A, in.ALabel)
	if err != nil {
		return nil, err
	}
	rb, err := runs(in.B, in.BLabel)
	if err != nil {
		return nil, err
	}
	d, err := profile.Compare(ra, rb, profile.DiffOptions{ALabel: in.ALabel, BLabel: in.BLabel, FDR: in.FDR, MinShare: in.MinShare})
	if err != nil {
		return nil, err
	}
	c := &Comparison{in: in, d: d}
	if c.a, err = mergedValue(in.A); err != nil {
		return nil, err
	}
	if c.b, err = mergedValue(in.B); err != nil {
		return nil, err
	}
	return c, nil
}

func runs(ds []*Data, arm string) ([]profile.Run, error) {
	out := make([]profile.Run, len(ds))
	for i, d := range ds {
		if d.Requests <= 0 {
			return nil, fmt.Errorf("%s run %d served no request in its window: no CPU per request", arm, i+1)
		}
		r, err := d.Run()
		if err != nil {
			return nil, fmt.Errorf("%s run %d: %w", arm, i+1, err)
		}
		out[i] = r
	}
	return out, nil
}

func mergedValue(ds []*Data) (*Value, error) {
	m, err := merged(ds)
	if err != nil {
		return nil, err
	}
	return New(m)
}

// Diff is the differential profile.
func (c *Comparison) Diff() *profile.Diff { return c.d }

func (c *Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile_comparison(%s against %s, %d pairs", c.d.BLabel, c.d.ALabel, c.d.Pairs)
	n := 0
	for _, f := range c.d.Functions {
		if f.Total.Verdict == "~" || n == 3 {
			continue
		}
		sep := ": "
		if n > 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%s%s %s µs/req %s", sep, f.Name, estimateText(f.Total), f.Total.Verdict)
		n++
	}
	if n == 0 {
		b.WriteString(": no function moved beyond the noise")
	}
	b.WriteString(")")
	return b.String()
}

func estimateText(e profile.Estimate) string {
	s := signed(e.Delta)
	if !math.IsNaN(e.Low) {
		s += fmt.Sprintf(" [%s, %s]", signed(e.Low), signed(e.High))
	}
	return s
}

func (c *Comparison) Type() string          { return "profile_comparison" }
func (c *Comparison) Freeze()               {}
func (c *Comparison) Truth() starlark.Bool  { return true }
func (c *Comparison) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: profile_comparison") }

var comparisonAttrs = []string{"a", "a_label", "b", "b_label", "fdr", "function", "functions", "improves", "method",
	"min_share", "multiplicity", "pairs", "warnings", "why", "worsens"}

func (c *Comparison) AttrNames() []string { return comparisonAttrs }

func (c *Comparison) Attr(name string) (starlark.Value, error) {
	switch name {
	case "a":
		return c.a, nil
	case "b":
		return c.b, nil
	case "a_label":
		return starlark.String(c.d.ALabel), nil
	case "b_label":
		return starlark.String(c.d.BLabel), nil
	case "pairs":
		return starlark.MakeInt(c.d.Pairs), nil
	case "method":
		return starlark.String(c.d.Method), nil
	case "why":
		return starlark.String(Why), nil
	case "multiplicity":
		return starlark.String(c.d.Multiplicity), nil
	case "fdr":
		return starlark.Float(or(c.in.FDR, profile.DefaultFDR)), nil
	case "min_share":
		return starlark.Float(or(c.in.MinShare, profile.DefaultMinShare)), nil
	case "warnings":
		return starval.StringList(c.d.Warnings), nil
	case "functions":
		out := make([]starlark.Value, len(c.d.Functions))
		for i, f := range c.d.Functions {
			out[i] = functionDiffStruct(f)
		}
		return starlark.NewList(out), nil
	case "function":
		return starlark.NewBuiltin("profile_comparison.function", c.function), nil
	case "improves", "worsens":
		want := strings.ToUpper(name)
		var names []string
		for _, f := range c.d.Functions {
			if f.Total.Verdict == want {
				names = append(names, f.Name)
			}
		}
		return starval.StringList(names), nil
	}
	return nil, nil
}

func or(x, def float64) float64 {
	if x <= 0 {
		return def
	}
	return x
}

func (c *Comparison) function(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &name); err != nil {
		return nil, err
	}
	for _, f := range c.d.Functions {
		if f.Name == name {
			return functionDiffStruct(f), nil
		}
	}
	return starlark.None, nil
}

// functionDiffStruct is one function's change: its total (with callees)
// under the plain names, its self time under self_*.
func functionDiffStruct(f profile.FunctionDiff) starlark.Value {
	e, s := f.Total, f.Self
	return starlarkstruct.FromStringDict(starlark.String("profile_function"), starlark.StringDict{
		"name": starlark.String(f.Name), "a_us_per_req": starlark.Float(e.A), "b_us_per_req": starlark.Float(e.B),
		"delta_us_per_req": starlark.Float(e.Delta), "ci": ci(e), "confidence": floatOrNone(e.Confidence),
		"verdict": starlark.String(e.Verdict), "reason": starlark.String(e.Reason), "p_value": floatOrNone(e.P),
		"p_adjusted": floatOrNone(e.PAdj), "tested": starlark.Bool(e.Tested), "deltas": starval.FloatList(e.Deltas),
		"self_a_us_per_req": starlark.Float(s.A), "self_b_us_per_req": starlark.Float(s.B),
		"self_delta_us_per_req": starlark.Float(s.Delta), "self_ci": ci(s), "self_verdict": starlark.String(s.Verdict),
	})
}

func ci(e profile.Estimate) starlark.Value {
	if math.IsNaN(e.Low) || math.IsNaN(e.High) {
		return starlark.None
	}
	return starlark.Tuple{starlark.Float(e.Low), starlark.Float(e.High)}
}

// MarshalValue stores the runs' profiles and the options.
func (c *Comparison) MarshalValue() ([]byte, error) { return json.Marshal(c.in) }

// Downloads are each arm's stacks, its runs merged, as folded text.
func (c *Comparison) Downloads() []record.Download {
	return []record.Download{
		{Name: fileStem([]string{c.d.ALabel}) + ".folded", MIME: "text/plain", Data: c.a.p.Folded()},
		{Name: fileStem([]string{c.d.BLabel}) + ".folded", MIME: "text/plain", Data: c.b.p.Folded()},
	}
}

// Figures are the differential flame graph, then each arm's at its own
// scale coloured by the change: when one arm costs 50 times the other, a
// function of the cheap arm alone is a sliver in the differential (sized
// by the mean of both) and a labelled frame in its own arm's graph.
func (c *Comparison) Figures() []record.Figure {
	diff := fmt.Sprintf("%s against %s: change in CPU per request", c.d.BLabel, c.d.ALabel)
	return []record.Figure{
		{Name: "flame-diff", Caption: "differential flame graph, " + diff + " (coloured only where the interval excludes 0)",
			SVG: flame.Differential(c.d, flame.Options{Title: diff})},
		c.armFigure(c.d.ALabel, flame.SideA),
		c.armFigure(c.d.BLabel, flame.SideB),
	}
}

func (c *Comparison) armFigure(label string, side flame.Side) record.Figure {
	title := fmt.Sprintf("%s at its own scale, coloured by %s - %s", label, c.d.BLabel, c.d.ALabel)
	return record.Figure{Name: "flame-" + label,
		Caption: fmt.Sprintf("flame graph of arm %s at its own scale (its CPU per request, the mean of its %d runs), coloured by the change where the interval excludes 0", label, c.d.Pairs),
		SVG:     flame.Arm(c.d, side, flame.Options{Title: title})}
}

// HTML is the headline, the table of the functions that moved most, the
// method and its multiplicity rule; the flame graphs follow (Figures).
func (c *Comparison) HTML() string {
	var b strings.Builder
	b.WriteString(`<div class="profile-comparison"><p><strong>` + esc(c.headline()) + `</strong></p>`)
	head, rows := c.table()
	b.WriteString(htmlTable("profile-comparison", head, rows))
	b.WriteString(`<p class="method">` + esc(c.d.Method+". "+c.d.Multiplicity+".") + `</p>`)
	b.WriteString(`<details><summary>why this method</summary><p>` + esc(Why) + `</p></details>`)
	for _, w := range c.d.Warnings {
		b.WriteString(`<p class="warning">` + esc(w) + `</p>`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

// Markdown is the same, for an issue or a PR.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	head, rows := c.table()
	b.WriteString("**" + mdEscape(c.headline()) + "**\n\n" + mdTable(head, rows))
	b.WriteString("\n" + mdEscape(c.d.Method+". "+c.d.Multiplicity+".") + "\n\n")
	b.WriteString("<details><summary>why this method</summary>\n\n" + mdEscape(Why) + "\n\n</details>\n")
	for _, w := range c.d.Warnings {
		b.WriteString("\n> warning: " + mdEscape(w) + "\n")
	}
	return b.String()
}

// headline says how much the CPU per request moved and which functions'
// own code explains it: those whose self time changed beyond its interval,
// the largest changes first (a root frame such as main or PostmasterMain
// moves by everything below it, and has no self time to speak of).
func (c *Comparison) headline() string {
	root := c.d.Tree.Estimate
	line := fmt.Sprintf("Where the CPU per request moved, %s against %s over %d pairs: in all, %s → %s µs per request (%s)",
		c.d.BLabel, c.d.ALabel, c.d.Pairs, flame.Num(root.A), flame.Num(root.B), signed(root.Delta))
	movers := c.explainedBy()
	if len(movers) == 0 {
		return line + "; no function's own time moved beyond its interval"
	}
	var parts []string
	for _, f := range movers {
		parts = append(parts, fmt.Sprintf("%s %s", f.Name, signed(f.Self.Delta)))
	}
	return line + "; in the functions' own code: " + strings.Join(parts, ", ")
}

// headlineFunctions bounds the functions the headline names.
const headlineFunctions = 3

// explainedBy are the functions whose self time changed beyond its
// interval (IMPROVES or WORSENS in self), largest change first, at most
// headlineFunctions.
func (c *Comparison) explainedBy() []profile.FunctionDiff {
	var out []profile.FunctionDiff
	for _, f := range c.d.Functions {
		if f.Self.Verdict == "IMPROVES" || f.Self.Verdict == "WORSENS" {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(x, y profile.FunctionDiff) int {
		return cmp.Compare(math.Abs(y.Self.Delta), math.Abs(x.Self.Delta))
	})
	return out[:min(headlineFunctions, len(out))]
}

func (c *Comparison) table() (head []string, rows [][]string) {
	conf := "interval"
	for _, f := range c.d.Functions {
		if !math.IsNaN(f.Total.Confidence) {
			conf = fmt.Sprintf("%.1f %% interval", 100*f.Total.Confidence)
			break
		}
	}
	head = []string{"function", c.d.ALabel + " µs/req", c.d.BLabel + " µs/req", c.d.BLabel + " - " + c.d.ALabel, conf, "verdict", "self " + c.d.BLabel + " - " + c.d.ALabel}
	for _, f := range c.d.Functions[:min(topRows, len(c.d.Functions))] {
		e := f.Total
		interval := "–"
		if !math.IsNaN(e.Low) {
			interval = fmt.Sprintf("[%s, %s]", signed(e.Low), signed(e.High))
		}
		verdict := e.Verdict
		if verdict == "~" && e.Reason != "" {
			verdict = "~ (" + e.Reason + ")"
		}
		rows = append(rows, []string{f.Name, flame.Num(e.A), flame.Num(e.B), signed(e.Delta), interval, verdict, signed(f.Self.Delta)})
	}
	return head, rows
}

// JSON is the headline figures and the functions of the table.
func (c *Comparison) JSON() any {
	type fn struct {
		Name    string   `json:"name"`
		A       float64  `json:"a_us_per_req"`
		B       float64  `json:"b_us_per_req"`
		Delta   float64  `json:"delta_us_per_req"`
		Low     *float64 `json:"ci_low"`
		High    *float64 `json:"ci_high"`
		Verdict string   `json:"verdict"`
	}
	var fns []fn
	for _, f := range c.d.Functions[:min(topRows, len(c.d.Functions))] {
		e := f.Total
		fns = append(fns, fn{f.Name, e.A, e.B, e.Delta, finite(e.Low), finite(e.High), e.Verdict})
	}
	var movers []string
	for _, f := range c.explainedBy() {
		movers = append(movers, f.Name)
	}
	return map[string]any{"headline": c.headline(), "explained_by": movers, "a_label": c.d.ALabel, "b_label": c.d.BLabel, "pairs": c.d.Pairs, "method": c.d.Method,
		"multiplicity": c.d.Multiplicity, "warnings": c.d.Warnings, "functions": fns}
}
