package workload

import (
	"fmt"
	"html"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/redact"
	"github.com/benchbook/benchbook/runtime/starjson"
)

// Run is the result of one workload: a Starlark value of type "run". Its
// attributes are the table runFields (fields.go), each with its unit,
// source and meaning, which the reference's table of run attributes shows;
// the observers' figures (db_cpu_us_per_req, foreign_cpu...) follow by the
// names they give. count + sum(errors) + dropped + undecided == intended,
// always; p(q) and hist count failed and dropped requests as lower bounds,
// ok_p(q) and ok_hist the successes alone.
type Run struct {
	d           runData
	acquire     *hdrhistogram.Histogram            // sql: waits for a pooled connection; nil otherwise
	byStatement map[string]*hdrhistogram.Histogram // sql: latency per statement of the script, by its tag
	tags        map[string]*Run                    // a mix's runs by tag (bytag.go); nil otherwise
	parent      *Run                               // a per-tag run's whole run
	sharedNote  string                             // the warning naming the figures that are not its own (ownFigures)
	reads       tagReads                           // the tags whose runs were read (TagsRead)
}

// runData is what a Run holds: what loadgen measured, kept whole (its
// histograms too: Hist, OK, Service, and Lag, which is not stored), and
// what the workload adds to it. runStored (runstore.go) is how the cache
// keeps it.
type runData struct {
	*loadgen.Result           // the measurement; exec fills one from its samples
	Kind            string    // "http", "sql", "mongo", "exec"
	Label           string    // what ran
	Clients         int       // closed loop: its clients (users)
	Think           string    // closed loop: its users' think time, "1s" or "exp(1s)"; "" for none
	Rate            float64   // open loop: its arrival rate, req/s
	GenShare        float64   // the generator's CPU share over the window (users.go); NaN if unknown
	ThinkLagMs      float64   // users: the median delay from the end of a user's think to its send, ms
	WallMs          []float64 // exec: wall time per measured run
	CPUMs           []float64 // exec: user + system CPU per run
	UserMs          []float64 // exec: user CPU per run
	SysMs           []float64 // exec: system CPU per run
	MaxRSSKb        []int64   // exec: peak resident size per run
	WarmupS         float64   // how long the warm-up took (settle.go)
	WarmupAuto      bool      // it was warmup = "auto"
	Agents          []agentRow
	Incomplete      bool              // a fleet run that lost an agent
	Profile         *starprofile.Data // what profile = True sampled (profile.go), else nil
	Tag             string            // a per-tag run's tag (run.by_tag[tag]); "" for a whole run
	Seed            uint64            // a mix's seed: the draw of every request's kind
	Share           float64           // a per-tag run of a mix: the tag's share of the weights
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
//
// A mix's result (res.Tags) makes a run per tag as well (tagged).
func newRun(kind string, spec loadgen.Spec, res *loadgen.Result) *Run {
	r := &Run{d: runData{Result: res, Kind: kind, Label: redact.String(spec.Label), Clients: spec.Clients, Rate: spec.Rate,
		Think: thinkText(spec), GenShare: genShare(kind, res, nil), ThinkLagMs: thinkLag(spec, res)}}
	r.noteBox()
	r.d.Warnings = append(r.d.Warnings, trendWarnings(r.d.Windows, spec.Clients == 0 && spec.Rate > 0)...)
	if tags := res.Tags; len(tags) > 0 {
		maskTags(tags)
		r.tags = tagRunsOf(r, spec, tags, nil)
		sharedFigures(r.tags, res.Observed)
	}
	return r
}

// mixed notes a mix's seed and each tag's share of the weights.
func (r *Run) mixed(seed uint64, shares map[string]float64) *Run {
	r.d.Seed = seed
	shown := shownTags(slices.Collect(maps.Keys(shares)))
	for tag, share := range shares {
		if t := r.tags[shown[tag]]; t != nil {
			t.d.Share = share
		}
	}
	return r
}

// maskTags hides the secrets in a mix's tags as newRun does in a label: a
// default tag is the request's path, "GET /items?access_token=T", and tags
// show in records and the cache.
func maskTags(tags map[string]*loadgen.Result) {
	for tag, shown := range shownTags(slices.Collect(maps.Keys(tags))) {
		if shown != tag {
			tags[shown] = tags[tag]
			delete(tags, tag)
		}
	}
}

// shownTags maps each tag to itself with its secrets hidden; two that hide
// to one text are told apart by a number (" #2"), in the tags' order.
func shownTags(tags []string) map[string]string {
	slices.Sort(tags)
	out := make(map[string]string, len(tags))
	taken := make(map[string]bool, len(tags))
	for _, t := range tags {
		taken[t] = true
	}
	for _, t := range tags {
		s := redact.String(t)
		if s != t {
			for n, base := 2, s; taken[s]; n++ {
				s = fmt.Sprintf("%s #%d", base, n)
			}
			taken[s] = true
		}
		out[t] = s
	}
	return out
}

// genCPU is the generator's CPU per decided request, µs.
func (r *Run) genCPU() float64 {
	if n := r.d.Count + sumErrors(r.d.Errors); n > 0 {
		return float64(r.d.CPU.Microseconds()) / float64(n)
	}
	return 0
}

// inUnits is d in units of unit, as a run shows durations (µs, ms).
func inUnits(d, unit time.Duration) float64 { return float64(d) / float64(unit) }

// okHist is the successes' latency: before runs kept it apart, hist was.
func (r *Run) okHist() *hdrhistogram.Histogram {
	if r.d.OK == nil {
		return r.d.Hist
	}
	return r.d.OK
}

func (r *Run) lagHist() *hdrhistogram.Histogram {
	if r.d.Lag == nil {
		return newHist()
	}
	return r.d.Lag
}

// Go methods other packages use through their own interfaces.

// Hdr returns the merged latency histogram, values in microseconds.
func (r *Run) Hdr() *hdrhistogram.Histogram { return r.d.Hist }

// Interrupted says whether Ctrl-C ended the run early.
func (r *Run) Interrupted() bool { return r.d.Interrupted }

// Warnings are the run's non-fatal problems.
func (r *Run) Warnings() []string { return r.d.Warnings }

// RPS is successful requests per second over the measurement window.
func (r *Run) RPS() float64 {
	if d := r.d.Measured.Seconds(); d > 0 {
		return float64(r.d.Count) / d
	}
	return 0
}

func (r *Run) String() string {
	return fmt.Sprintf("run(%s %s: %d ok, %.1f req/s, p50 %s, p99 %s, %d errors%s)", r.d.Kind, r.d.Label,
		r.d.Count, r.RPS(), fmtMs(quantileMs(r.d.Hist, 50)), fmtMs(quantileMs(r.d.Hist, 99)), sumErrors(r.d.Errors), r.invalidSuffix())
}
func (r *Run) Type() string          { return "run" }
func (r *Run) Freeze()               {}
func (r *Run) Truth() starlark.Bool  { return true }
func (r *Run) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: run") }

// AttrNames are the table's names, then the observers' figures.
func (r *Run) AttrNames() []string {
	names := make([]string, 0, len(runFields)+len(r.d.Observed))
	for _, f := range runFields {
		names = append(names, f.name)
	}
	return append(names, sortedKeys(r.d.Observed)...)
}

func (r *Run) Attr(name string) (starlark.Value, error) {
	if r.parent != nil {
		r.parent.noteTagRead(r.d.Tag)
	}
	if f := field(name); f != nil {
		return f.get(r)
	}
	if v, ok := r.d.Observed[name]; ok {
		return starlark.Float(v), nil
	}
	if r.d.Interrupted { // its observers' figures were never taken
		return nil, starlark.NoSuchAttrError(fmt.Sprintf("run has no .%s: it was interrupted (Ctrl-C) before its figures were taken", name))
	}
	if why := r.WhyMissing(name); why != "" {
		return nil, starlark.NoSuchAttrError(fmt.Sprintf("run has no .%s: %s", name, why))
	}
	return nil, nil
}

func histOrNone(h *hdrhistogram.Histogram) starlark.Value {
	if h == nil {
		return starlark.None
	}
	return &Histogram{h: h}
}

func (r *Run) byStatementDict() *starlark.Dict {
	d := starlark.NewDict(len(r.byStatement))
	for _, k := range sortedKeys(r.byStatement) {
		_ = d.SetKey(starlark.String(k), &Histogram{h: r.byStatement[k]})
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

// summaryRow is the compact table both displays use.
func (r *Run) summaryRow() (head, row []string) {
	if r.d.Kind == "exec" {
		return r.execSummaryRow()
	}
	head = []string{"run", "ok", "req/s"}
	row = []string{r.d.Label, fmt.Sprint(r.d.Count), fmt.Sprintf("%.1f", r.RPS())}
	for _, q := range summaryQuantiles {
		head, row = append(head, "p"+fmtQ(q)), append(row, fmtMs(quantileMs(r.d.Hist, q)))
	}
	head = append(head, "max", "errors")
	row = append(row, fmtMs(usToMs(r.d.Hist.Max())), r.errorText())
	if r.d.Rate > 0 {
		head = append(head, "late", "dropped")
		row = append(row, fmt.Sprint(r.d.Late), fmt.Sprint(r.d.Dropped))
	}
	if r.d.Think != "" {
		head = append(head, "users", "think", "think taken", "late")
		row = append(row, fmt.Sprint(r.d.Clients), r.d.Think, fmtMs(r.thinkMs()), fmt.Sprint(r.d.Late))
	}
	if r.d.Tick > 0 {
		head = append(head, "tick")
		row = append(row, fmt.Sprintf("%g µs", inUnits(r.d.Tick, time.Microsecond)))
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
	row = append(row, fmt.Sprintf("%.1f µs", r.genCPU()))
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
	b.WriteString(r.tagsMarkdown())
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
	b.WriteString(r.tagsHTML())
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

// JSON is the run's figures, by the table's JSON keys (latencies in ms),
// with the observers' figures under "observed".
func (r *Run) JSON() any {
	out := map[string]any{"observed": r.d.Observed, "warmup_auto": r.d.WarmupAuto}
	for _, f := range runFields {
		if key := f.jsonKey(); key != "" {
			v, err := f.get(r)
			if err == nil {
				out[key], err = starjson.Of(v)
			}
			if err != nil {
				out[key] = "error: " + err.Error()
			}
		}
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
