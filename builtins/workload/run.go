package workload

import (
	"encoding/json"
	"fmt"
	"html"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Run is the result of one workload: a Starlark value of type "run". Its
// attributes (TestRunDocListsEveryAttr keeps this list whole):
//
//   - what ran: kind ("http", "sql", "exec"), label, duration (s of
//     measurement), warmup_s (s of warm-up before it: the given warmup, or
//     how long warmup = "auto" took to settle), interrupted (Ctrl-C ended
//     it), warnings (a busy box, windows that trend: settle.go).
//   - counts: intended, count (successes), errors (a dict by class),
//     dropped and late (open loop), undecided (Ctrl-C); count +
//     sum(errors) + dropped + undecided == intended.
//   - latency, ms: p(q) and hist (every decided request, failures and drops
//     as lower bounds), ok_p(q) and ok_hist (successes alone), mean, max,
//     min and stddev (exec: of the wall times), service (service-time
//     histogram), by_tag and acquire (sql), windows (per window: start,
//     count, rps, p50, p99, errors), rps.
//   - the generator: gen_cpu_us_per_req, gen_gc_pause_ms (its GC pauses
//     over the window, summed over a fleet's agents), tick_ms (open loop:
//     the tick it sent on, 0 for each request at its intended start).
//   - exec, per measured run: wall_ms, cpu_ms, user_ms, sys_ms, max_rss_kb.
//   - mongo: docs_per_req (documents returned or written per request).
//   - run guards: valid, invalid_reason, trips (at, source, kind, fatal,
//     evidence).
//   - a fleet run: agents (one row per agent), incomplete (an agent was
//     lost).
//   - the box over the window (host.Box, on every run): foreign_cpu and
//     steal_cpu (cores other processes used and the hypervisor stole),
//     load1 (the load average over the window: the mean of its two ends).
//   - the observers' figures, by the names they give (db_cpu_us_per_req...).
//   - profile: with profile = True, the targets' on-CPU profile over the
//     window (starprofile.Value: folded, functions, us_per_req...), else
//     None.
type Run struct {
	d       runData
	hist    *hdrhistogram.Histogram // every decided request; failures and drops as lower bounds
	ok      *hdrhistogram.Histogram // successes alone; nil in runs stored before it (hist is)
	service *hdrhistogram.Histogram
	lag     *hdrhistogram.Histogram // open loop dispatch lag; not stored
	acquire *hdrhistogram.Histogram
	byTag   map[string]*hdrhistogram.Histogram
}

// runData is everything a Run stores besides its histograms; it is also
// the codec's JSON body (histograms travel as HDR V2 bytes beside it).
type runData struct {
	Kind        string             `json:"kind"`  // "http", "sql", "exec"
	Label       string             `json:"label"` // what ran
	Clients     int                `json:"clients,omitempty"`
	Rate        float64            `json:"rate,omitempty"`
	Intended    int64              `json:"intended"` // requests due (open loop) or started (closed) in the window
	Count       int64              `json:"count"`    // successful requests in the window
	Errors      map[string]int64   `json:"errors"`   // by class
	Duration    float64            `json:"duration"`
	Late        int64              `json:"late"`
	TickUs      float64            `json:"tick_us,omitempty"` // open loop: the tick it sent on (0: each request at its intended start)
	Dropped     int64              `json:"dropped"`           // open loop: given up unsent
	Undecided   int64              `json:"undecided"`         // Ctrl-C came before their outcome
	Windows     []windowStat       `json:"windows"`
	GenCPU      float64            `json:"gen_cpu_us_per_req"`
	GenGCPause  float64            `json:"gen_gc_pause_ms,omitempty"` // the generator's GC pauses over the window
	Interrupted bool               `json:"interrupted"`
	Warnings    []string           `json:"warnings"`
	Observed    map[string]float64 `json:"observed,omitempty"`
	WallMs      []float64          `json:"wall_ms,omitempty"`
	CPUMs       []float64          `json:"cpu_ms,omitempty"`
	UserMs      []float64          `json:"user_ms,omitempty"` // exec: user CPU per run
	SysMs       []float64          `json:"sys_ms,omitempty"`  // exec: system CPU per run
	MaxRSSKb    []int64            `json:"max_rss_kb,omitempty"`
	Trips       []guard.Trip       `json:"trips,omitempty"`       // run guards that tripped (guards.go)
	WarmupS     float64            `json:"warmup_s,omitempty"`    // how long the warm-up took (settle.go)
	WarmupAuto  bool               `json:"warmup_auto,omitempty"` // it was warmup = "auto"
	Agents      []agentRow         `json:"agents,omitempty"`      // a fleet run: one row per agent
	Incomplete  bool               `json:"incomplete,omitempty"`  // a fleet run that lost an agent
	// Profile is what profile = True sampled (profile.go); absent
	// otherwise, so a run without it is stored as it always was.
	Profile *starprofile.Data `json:"profile,omitempty"`

	Hist    []byte            `json:"hist"`
	OK      []byte            `json:"ok_hist,omitempty"` // absent in runs stored before it: Hist was successes only
	Service []byte            `json:"service,omitempty"`
	Acquire []byte            `json:"acquire,omitempty"`
	ByTag   map[string][]byte `json:"by_tag,omitempty"`
}

// windowStat is one measurement window of a run.
type windowStat = loadgen.Window

var (
	_ starlark.HasAttrs = (*Run)(nil)
	_ codec.Marshaler   = (*Run)(nil)
)

// newRun turns what loadgen measured into a Run: the one constructor, for
// http and sql (loadgen.Run's result), a fleet (the merged result) and exec
// (an empty result its samples fill). Its label (a URL by default) shows
// in records, file names and the cache: a password in it is hidden.
func newRun(kind string, spec loadgen.Spec, res *loadgen.Result) *Run {
	r := &Run{hist: res.Hist, ok: res.OK, service: res.Service, lag: res.Lag, d: runData{
		Kind: kind, Label: redact.String(spec.Label), Clients: spec.Clients, Rate: spec.Rate,
		Intended: res.Intended, Count: res.Count, Errors: res.Errors, Duration: res.Measured.Seconds(),
		Late: res.Late, TickUs: float64(res.Tick) / float64(time.Microsecond), Dropped: res.Dropped, Undecided: res.Undecided, Interrupted: res.Interrupted,
		Warnings: res.Warnings, Observed: res.Observed, Windows: res.Windows, Trips: res.Trips,
		GenGCPause: float64(res.GCPause) / float64(time.Millisecond),
	}}
	if n := res.Count + sumErrors(res.Errors); n > 0 {
		r.d.GenCPU = float64(res.CPU.Microseconds()) / float64(n)
	}
	r.noteBox()
	r.d.Warnings = append(r.d.Warnings, trendWarnings(r.d.Windows, spec.Clients == 0 && spec.Rate > 0)...)
	return r
}

// okHist is the successes' latency: before runs kept it apart, hist was.
func (r *Run) okHist() *hdrhistogram.Histogram {
	if r.ok == nil {
		return r.hist
	}
	return r.ok
}

func (r *Run) lagHist() *hdrhistogram.Histogram {
	if r.lag == nil {
		return newHist()
	}
	return r.lag
}

// Go methods other packages use through their own interfaces.

// Hdr returns the merged latency histogram, values in microseconds.
func (r *Run) Hdr() *hdrhistogram.Histogram { return r.hist }

// Interrupted says whether Ctrl-C ended the run early.
func (r *Run) Interrupted() bool { return r.d.Interrupted }

// Warnings are the run's non-fatal problems.
func (r *Run) Warnings() []string { return r.d.Warnings }

// RPS is successful requests per second over the measurement window.
func (r *Run) RPS() float64 {
	if r.d.Duration <= 0 {
		return 0
	}
	return float64(r.d.Count) / r.d.Duration
}

func (r *Run) String() string {
	return fmt.Sprintf("run(%s %s: %d ok, %.1f req/s, p50 %s, p99 %s, %d errors%s)", r.d.Kind, r.d.Label,
		r.d.Count, r.RPS(), fmtMs(quantileMs(r.hist, 50)), fmtMs(quantileMs(r.hist, 99)), sumErrors(r.d.Errors), r.invalidSuffix())
}
func (r *Run) Type() string          { return "run" }
func (r *Run) Freeze()               {}
func (r *Run) Truth() starlark.Bool  { return true }
func (r *Run) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: run") }

var runAttrs = []string{"acquire", "by_tag", "count", "cpu_ms", "dropped", "duration", "errors",
	"gen_cpu_us_per_req", "hist", "intended", "interrupted", "kind", "label", "late", "tick_ms", "max", "max_rss_kb",
	"mean", "min", "ok_hist", "ok_p", "p", "rps", "service", "stddev", "sys_ms", "undecided", "user_ms", "wall_ms", "warnings", "windows",
	"valid", "invalid_reason", "trips", "agents", "incomplete", "gen_gc_pause_ms", "warmup_s", "profile"}

func (r *Run) AttrNames() []string {
	return append(append([]string(nil), runAttrs...), sortedKeys(r.d.Observed)...)
}

func (r *Run) Attr(name string) (starlark.Value, error) {
	if v := r.scalarAttr(name); v != nil {
		return v, nil
	}
	if v := r.guardAttr(name); v != nil {
		return v, nil
	}
	switch name {
	case "p":
		return percentileMethod("run.p", r.hist), nil
	case "ok_p":
		return percentileMethod("run.ok_p", r.okHist()), nil
	case "ok_hist":
		return &Histogram{h: r.okHist()}, nil
	case "errors":
		return intDict(r.d.Errors), nil
	case "windows":
		return windowList(r.d.Windows), nil
	case "hist":
		return &Histogram{h: r.hist}, nil
	case "service":
		return histOrNone(r.service), nil
	case "acquire":
		return histOrNone(r.acquire), nil
	case "by_tag":
		return r.byTagDict(), nil
	case "warnings":
		return starval.StringList(r.d.Warnings), nil
	case "wall_ms", "cpu_ms", "user_ms", "sys_ms":
		return starval.FloatList(map[string][]float64{"wall_ms": r.d.WallMs, "cpu_ms": r.d.CPUMs, "user_ms": r.d.UserMs, "sys_ms": r.d.SysMs}[name]), nil
	case "min", "stddev":
		return starlark.Float(r.spread(name)), nil
	case "max_rss_kb":
		return starval.IntList(r.d.MaxRSSKb), nil
	case "agents":
		return agentList(r.d.Agents), nil
	case "incomplete":
		return starlark.Bool(r.d.Incomplete), nil
	case "profile":
		return r.profileValue()
	}
	if v, ok := r.d.Observed[name]; ok {
		return starlark.Float(v), nil
	}
	if r.d.Interrupted { // its observers' figures were never taken
		return nil, starlark.NoSuchAttrError(fmt.Sprintf("run has no .%s: it was interrupted (Ctrl-C) before its figures were taken", name))
	}
	return nil, nil
}

func (r *Run) scalarAttr(name string) starlark.Value {
	switch name {
	case "count":
		return starlark.MakeInt64(r.d.Count)
	case "rps":
		return starlark.Float(r.RPS())
	case "mean":
		return starlark.Float(r.hist.Mean() / 1000)
	case "max":
		return starlark.Float(usToMs(r.hist.Max()))
	case "late":
		return starlark.MakeInt64(r.d.Late)
	case "tick_ms":
		return starlark.Float(r.d.TickUs / 1000)
	case "dropped":
		return starlark.MakeInt64(r.d.Dropped)
	case "intended":
		return starlark.MakeInt64(r.d.Intended)
	case "undecided":
		return starlark.MakeInt64(r.d.Undecided)
	case "gen_cpu_us_per_req":
		return starlark.Float(r.d.GenCPU)
	case "gen_gc_pause_ms":
		return starlark.Float(r.d.GenGCPause)
	case "interrupted":
		return starlark.Bool(r.d.Interrupted)
	case "duration":
		return starlark.Float(r.d.Duration)
	case "warmup_s":
		return starlark.Float(r.d.WarmupS)
	case "label":
		return starlark.String(r.d.Label)
	case "kind":
		return starlark.String(r.d.Kind)
	}
	return nil
}

func histOrNone(h *hdrhistogram.Histogram) starlark.Value {
	if h == nil {
		return starlark.None
	}
	return &Histogram{h: h}
}

func (r *Run) byTagDict() *starlark.Dict {
	d := starlark.NewDict(len(r.byTag))
	for _, k := range sortedKeys(r.byTag) {
		_ = d.SetKey(starlark.String(k), &Histogram{h: r.byTag[k]})
	}
	return d
}

func intDict(m map[string]int64) *starlark.Dict {
	d := starlark.NewDict(len(m))
	for _, k := range sortedKeys(m) {
		_ = d.SetKey(starlark.String(k), starlark.MakeInt64(m[k]))
	}
	return d
}

func windowList(ws []windowStat) *starlark.List {
	l := make([]starlark.Value, len(ws))
	for i, w := range ws {
		l[i] = starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
			"start": starlark.Float(w.Start), "count": starlark.MakeInt64(w.Count),
			"rps": starlark.Float(w.RPS), "p50": starlark.Float(w.P50), "p99": starlark.Float(w.P99),
			"errors": intDict(w.Errors),
		})
	}
	return starlark.NewList(l)
}

// MarshalValue stores the run as JSON with its histograms in HDR V2 encoding.
func (r *Run) MarshalValue() ([]byte, error) {
	d := r.d
	var err error
	enc := func(h *hdrhistogram.Histogram) []byte {
		if h == nil || err != nil {
			return nil
		}
		var b []byte
		b, err = h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		return b
	}
	d.Hist, d.OK, d.Service, d.Acquire = enc(r.hist), enc(r.ok), enc(r.service), enc(r.acquire)
	if len(r.byTag) > 0 {
		d.ByTag = map[string][]byte{}
		for k, h := range r.byTag {
			d.ByTag[k] = enc(h)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return json.Marshal(d)
}

func decodeRun(data []byte, _ codec.Types) (starlark.Value, error) {
	r := &Run{}
	if err := json.Unmarshal(data, &r.d); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	var err error
	dec := func(b []byte) *hdrhistogram.Histogram {
		if len(b) == 0 || err != nil {
			return nil
		}
		var h *hdrhistogram.Histogram
		h, err = hdrhistogram.Decode(b)
		return h
	}
	r.hist, r.ok, r.service, r.acquire = dec(r.d.Hist), dec(r.d.OK), dec(r.d.Service), dec(r.d.Acquire)
	if len(r.d.ByTag) > 0 {
		r.byTag = map[string]*hdrhistogram.Histogram{}
		for k, b := range r.d.ByTag {
			r.byTag[k] = dec(b)
		}
	}
	r.d.Hist, r.d.OK, r.d.Service, r.d.Acquire, r.d.ByTag = nil, nil, nil, nil, nil
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if r.d.Intended == 0 && (r.d.Kind == "http" || r.d.Kind == "sql") { // stored before runs kept it
		r.d.Intended = r.d.Count + sumErrors(r.d.Errors) + r.d.Dropped + r.d.Undecided
	}
	if r.hist == nil {
		r.hist = newHist()
	}
	return r, nil
}

// summaryRow is the compact table both displays use.
func (r *Run) summaryRow() (head, row []string) {
	if r.d.Kind == "exec" {
		return r.execSummaryRow()
	}
	head = []string{"run", "ok", "req/s", "p50", "p90", "p99", "p99.9", "max", "errors"}
	row = []string{r.d.Label, fmt.Sprint(r.d.Count), fmt.Sprintf("%.1f", r.RPS()),
		fmtMs(quantileMs(r.hist, 50)), fmtMs(quantileMs(r.hist, 90)), fmtMs(quantileMs(r.hist, 99)),
		fmtMs(quantileMs(r.hist, 99.9)), fmtMs(usToMs(r.hist.Max())), r.errorText()}
	if r.d.Rate > 0 {
		head = append(head, "late", "dropped")
		row = append(row, fmt.Sprint(r.d.Late), fmt.Sprint(r.d.Dropped))
	}
	if r.d.TickUs > 0 {
		head = append(head, "tick")
		row = append(row, fmt.Sprintf("%g µs", r.d.TickUs))
	}
	if r.d.Undecided > 0 {
		head = append(head, "undecided")
		row = append(row, fmt.Sprint(r.d.Undecided))
	}
	if r.d.Intended > 0 {
		head = append(head, "intended")
		row = append(row, fmt.Sprint(r.d.Intended))
	}
	head = append(head, "gen CPU/req")
	row = append(row, fmt.Sprintf("%.1f µs", r.d.GenCPU))
	return appendCgroupCols(head, row, r.d.Observed)
}

func (r *Run) errorText() string {
	if len(r.d.Errors) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range sortedKeys(r.d.Errors) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, r.d.Errors[k]))
	}
	return strings.Join(parts, ", ")
}

// Markdown is a one-row summary table plus the warnings.
func (r *Run) Markdown() string {
	head, row := r.summaryRow()
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat(" --- |", len(head)) + "\n")
	for i := range row {
		row[i] = strings.ReplaceAll(row[i], "|", `\|`)
	}
	b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	b.WriteString(agentsMarkdown(r.d.Agents))
	if p := r.profileLine(); p != "" {
		b.WriteString("\n" + p + "\n")
	}
	for _, w := range r.d.Warnings {
		b.WriteString("\n> warning: " + w + "\n")
	}
	b.WriteString(r.tripsMarkdown())
	return b.String()
}

// HTML is the same summary as an HTML table.
func (r *Run) HTML() string {
	head, row := r.summaryRow()
	var b strings.Builder
	b.WriteString(htmlTable("run", head, [][]string{row}))
	b.WriteString(agentsHTML(r.d.Agents))
	if p := r.profileLine(); p != "" {
		b.WriteString(`<p class="profile">` + html.EscapeString(p) + "</p>")
	}
	for _, w := range r.d.Warnings {
		b.WriteString(`<p class="warning">` + html.EscapeString(w) + "</p>")
	}
	b.WriteString(r.tripsHTML())
	return b.String()
}

// htmlTable is a table of class class: a header row, then rows, every cell
// escaped.
func htmlTable(class string, head []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString(`<table class="` + class + `"><tr>`)
	for _, h := range head {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr>")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

// JSON is the run's figures with latencies in ms.
func (r *Run) JSON() any {
	out := map[string]any{
		"kind": r.d.Kind, "label": r.d.Label, "count": r.d.Count, "rps": r.RPS(),
		"errors": r.d.Errors, "duration": r.d.Duration, "late": r.d.Late, "dropped": r.d.Dropped,
		"intended": r.d.Intended, "undecided": r.d.Undecided,
		"latency": (&Histogram{h: r.hist}).JSON(), "ok_latency": (&Histogram{h: r.okHist()}).JSON(), "windows": r.d.Windows,
		"gen_cpu_us_per_req": r.d.GenCPU, "gen_gc_pause_ms": r.d.GenGCPause, "interrupted": r.d.Interrupted,
		"warnings": r.d.Warnings, "observed": r.d.Observed,
		"wall_ms": r.d.WallMs, "cpu_ms": r.d.CPUMs, "max_rss_kb": r.d.MaxRSSKb,
		"user_ms": r.d.UserMs, "sys_ms": r.d.SysMs,
		"valid": r.valid(), "invalid_reason": guard.Invalid(r.d.Trips), "trips": r.d.Trips,
		"agents": r.d.Agents, "incomplete": r.d.Incomplete, "warmup_s": r.d.WarmupS, "warmup_auto": r.d.WarmupAuto,
	}
	if v, err := r.profileValue(); err == nil && v != starlark.None {
		out["profile"] = v.(*starprofile.Value).JSON()
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
