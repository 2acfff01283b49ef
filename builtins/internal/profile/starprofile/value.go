package starprofile

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/flame"
	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// Value is run.profile: one run's on-CPU profile of its targets over the
// measured window. Attributes:
//
//   - folded: the stacks as folded text ("root;...;leaf count" lines), what
//     flamegraph.pl, inferno and speedscope read.
//   - samples, cpu_ms (the CPU the samples stand for: samples × period),
//     hz, window_s, requests (successful, in the window), us_per_req (the
//     targets' CPU per request: cpu_ms × 1000 / requests).
//   - resolved_share (of frames that resolved to a symbol),
//     resolved_leaf_share (of samples whose innermost frame did), lost
//     (samples perf lost), cut_samples (in stacks cut at the bound of
//     MaxStacks), processes, targets, source ("perf"), event, warnings.
//   - functions: one struct per function, by total share: name,
//     self_share, total_share, self_us_per_req, us_per_req (its CPU with
//     its callees, per request); function(name): that struct, or None.
type Value struct {
	d *Data
	p *profile.Profile
	f *profile.Figures // nil without requests
}

var (
	_ starlark.HasAttrs   = (*Value)(nil)
	_ codec.Marshaler     = (*Value)(nil)
	_ record.Downloader   = (*Value)(nil)
	_ record.FigureSet    = (*Value)(nil)
	_ record.HTMLer       = (*Value)(nil)
	_ record.Markdowner   = (*Value)(nil)
	_ record.JSONer       = (*Value)(nil)
	_ starlark.Comparable = (*Value)(nil)
)

// DecodeProfile rebuilds a stored profile (type "profile"): the workload
// module gives it, as run.profile makes profiles.
func DecodeProfile(b []byte, _ codec.Types) (starlark.Value, error) {
	var d Data
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return New(&d)
}

// New is the value of stored data.
func New(d *Data) (*Value, error) {
	p, err := d.Profile()
	if err != nil {
		return nil, err
	}
	v := &Value{d: d, p: p}
	if d.Requests > 0 && p.CPUNs > 0 {
		if v.f, err = p.Figures(profile.Cost{Requests: d.Requests}); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Data is what the value stores.
func (v *Value) Data() *Data { return v.d }

func (v *Value) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile(%s of %s: %d samples, %.0f ms of CPU over %.1f s", v.d.Source, strings.Join(v.d.Targets, ", "),
		v.d.Samples, float64(v.d.CPUNs)/1e6, v.d.WindowS)
	if v.f != nil {
		fmt.Fprintf(&b, ", %s µs per request", flame.Num(v.f.UsPerReq))
		for i, f := range v.topSelf(3) {
			sep := "; most self time: "
			if i > 0 {
				sep = ", "
			}
			fmt.Fprintf(&b, "%s%s %s µs/req", sep, f.Name, flame.Num(f.SelfUsPerReq))
		}
	}
	b.WriteString(")")
	return b.String()
}

// topSelf are the n functions with the most self time.
func (v *Value) topSelf(n int) []profile.Function {
	fs := append([]profile.Function(nil), v.f.Functions...)
	sortBy(fs, func(f profile.Function) float64 { return f.Self })
	return fs[:min(n, len(fs))]
}

func (v *Value) Type() string          { return "profile" }
func (v *Value) Freeze()               {}
func (v *Value) Truth() starlark.Bool  { return true }
func (v *Value) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: profile") }

// CompareSameType: two profiles are equal when they store the same data
// (a cached rerun's profile equals the one first measured).
func (v *Value) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	a, _ := v.MarshalValue()
	b, _ := y.(*Value).MarshalValue()
	return starval.EqualOnly(op, string(a) == string(b), v, y)
}

var valueAttrs = []string{"cpu_ms", "cut_samples", "event", "folded", "function", "functions", "hz", "lost", "processes",
	"requests", "resolved_leaf_share", "resolved_share", "samples", "source", "targets", "us_per_req", "warnings", "window_s"}

func (v *Value) AttrNames() []string { return valueAttrs }

func (v *Value) Attr(name string) (starlark.Value, error) {
	switch name {
	case "folded":
		return starlark.String(v.p.Folded()), nil
	case "samples":
		return starlark.MakeInt64(v.d.Samples), nil
	case "cpu_ms":
		return starlark.Float(float64(v.d.CPUNs) / 1e6), nil
	case "hz":
		return starlark.Float(hz(v.d.PeriodNs)), nil
	case "window_s":
		return starlark.Float(v.d.WindowS), nil
	case "requests":
		return starlark.MakeInt64(v.d.Requests), nil
	case "us_per_req":
		if v.f == nil {
			return starlark.None, nil
		}
		return starlark.Float(v.f.UsPerReq), nil
	case "resolved_share":
		return floatOrNone(v.p.ResolvedShare()), nil
	case "resolved_leaf_share":
		return floatOrNone(v.p.ResolvedLeafShare()), nil
	case "lost":
		return starlark.MakeInt64(v.d.Lost), nil
	case "cut_samples":
		return starlark.MakeInt64(v.d.CutSamples), nil
	case "processes":
		return starlark.MakeInt(v.d.Processes), nil
	case "targets":
		return starval.StringList(v.d.Targets), nil
	case "source":
		return starlark.String(v.d.Source), nil
	case "event":
		return starlark.String(v.d.Event), nil
	case "warnings":
		return starval.StringList(v.d.Warnings), nil
	case "functions":
		fs := v.functions()
		out := make([]starlark.Value, len(fs))
		for i, f := range fs {
			out[i] = functionStruct(f)
		}
		return starlark.NewList(out), nil
	case "function":
		return starlark.NewBuiltin("profile.function", v.function), nil
	}
	return nil, nil
}

// functions are the profile's functions with figures per request when the
// run served any.
func (v *Value) functions() []profile.Function {
	if v.f != nil {
		return v.f.Functions
	}
	return v.p.Functions()
}

func (v *Value) function(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &name); err != nil {
		return nil, err
	}
	for _, f := range v.functions() {
		if f.Name == name {
			return functionStruct(f), nil
		}
	}
	return starlark.None, nil
}

func functionStruct(f profile.Function) starlark.Value {
	return starlarkstruct.FromStringDict(starlark.String("function"), starlark.StringDict{
		"name": starlark.String(f.Name), "self_share": starlark.Float(f.Self), "total_share": starlark.Float(f.Total),
		"self_us_per_req": floatOrNone(f.SelfUsPerReq), "us_per_req": floatOrNone(f.TotalUsPerReq),
	})
}

// MarshalValue stores the data, from which the rest is computed again.
func (v *Value) MarshalValue() ([]byte, error) { return json.Marshal(v.d) }

// Downloads offers the folded stacks, for flamegraph.pl and speedscope.
func (v *Value) Downloads() []record.Download {
	return []record.Download{{Name: fileStem(v.d.Targets) + ".folded", MIME: "text/plain", Data: v.p.Folded()}}
}

// Figures is the flame graph.
func (v *Value) Figures() []record.Figure {
	return []record.Figure{{Name: "flame", Caption: "flame graph of " + strings.Join(v.d.Targets, ", ") + " over the measured window",
		SVG: flame.Icicle(v.p, flame.Options{Title: "on-CPU profile: " + strings.Join(v.d.Targets, ", "), UsPerReq: v.usPerReq()})}}
}

func (v *Value) usPerReq() float64 {
	if v.f == nil {
		return 0
	}
	return v.f.UsPerReq
}

// topRows is how many functions a table shows.
const topRows = 15

// HTML is the summary line and the table of the functions with the most
// CPU per request; the flame graph follows (Figures).
func (v *Value) HTML() string {
	var b strings.Builder
	b.WriteString(`<div class="profile"><p>` + esc(v.summary()) + `</p>`)
	head, rows := v.table()
	b.WriteString(htmlTable("profile", head, rows))
	for _, w := range v.d.Warnings {
		b.WriteString(`<p class="warning">` + esc(w) + `</p>`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

// Markdown is the same summary and table.
func (v *Value) Markdown() string {
	head, rows := v.table()
	var b strings.Builder
	b.WriteString(mdEscape(v.summary()) + "\n\n" + mdTable(head, rows))
	for _, w := range v.d.Warnings {
		b.WriteString("\n> warning: " + mdEscape(w) + "\n")
	}
	return b.String()
}

func (v *Value) summary() string {
	s := fmt.Sprintf("Profile of %s (%s, %s at %.0f Hz): %d samples, %.0f ms of CPU over %.1f s; %.0f %% of frames resolved to a symbol",
		strings.Join(v.d.Targets, ", "), v.d.Source, v.d.Event, hz(v.d.PeriodNs), v.d.Samples, float64(v.d.CPUNs)/1e6, v.d.WindowS, 100*v.p.ResolvedShare())
	if v.f != nil {
		s += fmt.Sprintf("; %s µs of CPU per request over %d requests", flame.Num(v.f.UsPerReq), v.d.Requests)
	}
	return s + "."
}

func (v *Value) table() (head []string, rows [][]string) {
	head = []string{"function", "total", "self", "µs/req", "self µs/req"}
	fs := v.functions()
	for _, f := range fs[:min(topRows, len(fs))] {
		rows = append(rows, []string{f.Name, pct(f.Total), pct(f.Self), numOrDash(f.TotalUsPerReq), numOrDash(f.SelfUsPerReq)})
	}
	return head, rows
}

// JSON is the summary and the top functions.
func (v *Value) JSON() any {
	type fn struct {
		Name       string   `json:"name"`
		Total      float64  `json:"total_share"`
		Self       float64  `json:"self_share"`
		UsPerReq   *float64 `json:"us_per_req"`
		SelfPerReq *float64 `json:"self_us_per_req"`
	}
	var fns []fn
	fs := v.functions()
	for _, f := range fs[:min(topRows, len(fs))] {
		fns = append(fns, fn{f.Name, f.Total, f.Self, finite(f.TotalUsPerReq), finite(f.SelfUsPerReq)})
	}
	return map[string]any{"targets": v.d.Targets, "source": v.d.Source, "samples": v.d.Samples, "cpu_ms": float64(v.d.CPUNs) / 1e6,
		"requests": v.d.Requests, "us_per_req": v.usPerReqJSON(), "window_s": v.d.WindowS, "warnings": v.d.Warnings, "functions": fns}
}

func (v *Value) usPerReqJSON() *float64 {
	if v.f == nil {
		return nil
	}
	return finite(v.f.UsPerReq)
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func hz(periodNs int64) float64 {
	if periodNs <= 0 {
		return 0
	}
	return 1e9 / float64(periodNs)
}

func floatOrNone(x float64) starlark.Value {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return starlark.None
	}
	return starlark.Float(x)
}
