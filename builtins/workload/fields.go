package workload

import (
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/runattrs"
	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// runField is one attribute of a run. The table below is the one list of
// them: AttrNames, Attr, JSON and the reference's table of run attributes
// (the module's Docs, docs/reference/workload.md) all read it, so a new
// figure is one entry here plus its computation.
type runField struct {
	name string // run.NAME
	unit string // of its value
	from string // what measures it
	doc  string // what it is (the reference's "what it is")
	json string // its key in JSON: "" for name, "-" for none (a method)
	get  func(*Run) (starlark.Value, error)
}

var runFields = []runField{
	{"kind", "text", "workload", `"http", "sql", "mongo" or "exec"`, "", text(func(r *Run) string { return r.d.Kind })},
	{"label", "text", "workload", "what ran (the URL, the statement, label = ...; a per-tag run: its tag)", "", text(func(r *Run) string { return r.d.Label })},
	{"tag", "text", "workload", `a per-tag run's tag (run.by_tag[tag]); "" for a whole run`, "", text(func(r *Run) string { return r.d.Tag })},
	{"duration", "s", "workload", "length of the measurement window", "", num(func(r *Run) float64 { return r.d.Measured.Seconds() })},
	{"warmup_s", "s", "load generator", `warm-up before the window: the given warmup, or how long warmup = "auto" took to settle`, "", num(func(r *Run) float64 { return r.d.WarmupS })},
	{"intended", "requests", "load generator", "requests due (open loop) or started (closed loop) in the window", "", count(func(r *Run) int64 { return r.d.Intended })},
	{"count", "requests", "load generator", "successful requests in the window", "", count(func(r *Run) int64 { return r.d.Count })},
	{"errors", "dict of requests", "load generator", "failed requests by class (refused, timeout, status 500, sqlstate 40001, ...)", "", value(func(r *Run) starlark.Value { return intDict(r.d.Errors) })},
	{"dropped", "requests", "load generator", "open loop: given up unsent, a timeout or more late", "", count(func(r *Run) int64 { return r.d.Dropped })},
	{"late", "requests", "load generator", "sent more than 10 ms after their intended start (open loop) or after their user's think time ended (users)", "", count(func(r *Run) int64 { return r.d.Late })},
	{"undecided", "requests", "load generator", "Ctrl-C came before their outcome", "", count(func(r *Run) int64 { return r.d.Undecided })},
	{"rps", "requests/s", "load generator", "count / duration", "", num((*Run).RPS)},
	{"error_rate", "ratio", "load generator", "(sum(errors) + dropped) / (count + sum(errors) + dropped): the share of the decided requests that failed", "", num((*Run).errorRate)},
	{"users", "users", "workload", "closed loop: its users (users = N, or clients = N: users that do not think); 0 in an open loop", "", count(func(r *Run) int64 { return int64(r.d.Clients) })},
	{"think", "text", "workload", `users: the think time given, "1s" or "exp(1s)"; "" for none`, "", text(func(r *Run) string { return r.d.Think })},
	{"think_ms", "ms", "load generator", "users: the think they took, from each outcome to the user's next send (a late send adds to it); 0 without think", "", num((*Run).thinkMs)},
	{"think_lag_ms", "ms", "load generator", "users: the median delay from the end of a user's think to its send (the generator's lateness)", "", num(func(r *Run) float64 { return r.d.ThinkLagMs })},
	{"rate", "requests/s", "workload", "open loop: the arrival rate given; 0 in a closed loop", "", num(func(r *Run) float64 { return r.d.Rate })},
	{"arrival_rps", "requests/s", "load generator", "intended / duration: requests started (closed loop) or due (open loop) per second", "", num((*Run).arrivalRPS)},
	{"arrival_cv", "ratio", "load generator", "users with think: the gaps between consecutive intended starts (ends of think), all users merged, standard deviation over mean (about 1 for exp think, Poisson-like; NaN otherwise)", "", num(func(r *Run) float64 { return r.d.Gaps.CV() })},
	{"p", "ms", "load generator (HDR histogram)", "p(q): latency percentile q of every decided request, failures and drops as lower bounds", "-", value(func(r *Run) starlark.Value { return percentileMethod("run.p", r.d.Hist) })},
	{"ok_p", "ms", "load generator (HDR histogram)", "ok_p(q): latency percentile q of the successes alone", "-", value(func(r *Run) starlark.Value { return percentileMethod("run.ok_p", r.okHist()) })},
	{"hist", "histogram (ms)", "load generator", "every decided request's latency", "latency", value(func(r *Run) starlark.Value { return &Histogram{h: r.d.Hist} })},
	{"ok_hist", "histogram (ms)", "load generator", "the successes' latency", "ok_latency", value(func(r *Run) starlark.Value { return &Histogram{h: r.okHist()} })},
	{"mean", "ms", "load generator", "mean latency (exec: of the measured runs' wall times)", "", num(func(r *Run) float64 { return r.d.Hist.Mean() / 1000 })},
	{"max", "ms", "load generator", "highest latency (exec: slowest run)", "", num(func(r *Run) float64 { return usToMs(r.d.Hist.Max()) })},
	{"min", "ms", "load generator", "exec: fastest run; else the lowest latency", "", num(func(r *Run) float64 { return r.spread("min") })},
	{"stddev", "ms", "load generator", "exec: standard deviation of the wall times; else of the latencies", "", num(func(r *Run) float64 { return r.spread("stddev") })},
	{"service", "histogram (ms)", "load generator", "open loop: service time, from the send (None in a closed loop)", "", value(func(r *Run) starlark.Value { return histOrNone(r.d.Service) })},
	{"by_tag", "dict of runs", "load generator", `a mix (requests = [...], or a generator that names each request's tag): a run per tag over the same window, its counts adding up to the run's; {} without tags`, "", value(func(r *Run) starlark.Value { return r.byTagValue() })},
	{"by_statement", "dict of histograms", "load generator", "sql: latency per statement of the script (queries = ...), by its tag", "", value(func(r *Run) starlark.Value { return r.byStatementDict() })},
	{"seed", "int", "workload", "a mix's seed: each request's kind is drawn from it, so a seed draws the same requests again", "", count(func(r *Run) int64 { return int64(r.d.Seed) })},
	{"share", "ratio", "workload", "a per-tag run of a mix: the tag's share of the weights (0 for a generator's tags)", "", num(func(r *Run) float64 { return r.d.Share })},
	{"acquire", "histogram (ms)", "pgx pool", "sql: waits to acquire a pooled connection", "", value(func(r *Run) starlark.Value { return histOrNone(r.acquire) })},
	{"windows", "list", "load generator", "per window (window = ...): start (s), count, rps, p50 and p99 (ms), errors", "", value(func(r *Run) starlark.Value { return windowList(r.d.Windows) })},
	{"rps_cv", "ratio", "load generator", "how unsteady the throughput was: the windows' req/s, standard deviation over mean (NaN under two windows)", "", num((*Run).rpsCV)},
	{"tick_ms", "ms", "load generator", "open loop: the tick it sent on (0: each request at its intended start)", "", num(func(r *Run) float64 { return inUnits(r.d.Tick, time.Microsecond) / 1000 })},
	{"gen_cpu_us_per_req", "µs per request", "load generator (getrusage)", "the generator's own CPU per decided request", "", num((*Run).genCPU)},
	{"gen_cpu_share", "ratio", "load generator (getrusage)", "the generator's CPU over the window as a share of the CPUs it may use (GOMAXPROCS; a fleet: its busiest agent's); NaN for exec", "", num(func(r *Run) float64 { return r.d.GenShare })},
	{"gen_bound", "bool", "load generator", "the generator may have set the pace: its CPU share 0.85 or more, an agent saturated, or (users) its sends typically late by more than 2 % of the users' cycle (think_lag_ms over mean + think_ms)", "", value(func(r *Run) starlark.Value { return starlark.Bool(r.genBound()) })},
	{"gen_gc_pause_ms", "ms", "load generator (Go runtime)", "the generator's GC pauses over the window (summed over a fleet's agents)", "", num(func(r *Run) float64 { return inUnits(r.d.GCPause, time.Millisecond) })},
	{"interrupted", "bool", "workload", "Ctrl-C ended the run early", "", value(func(r *Run) starlark.Value { return starlark.Bool(r.d.Interrupted) })},
	{"warnings", "list of text", "workload, observers, guards", "non-fatal problems: a saturated generator, late answers, guard warnings", "", value(func(r *Run) starlark.Value { return starval.StringList(r.d.Warnings) })},
	{"valid", "bool", "run guards", "no guard tripped fatally (see Run guards)", "", value(func(r *Run) starlark.Value { return starlark.Bool(r.valid()) })},
	{"invalid_reason", "text", "run guards", `the first fatal trip, or ""`, "", text(func(r *Run) string { return guard.Invalid(r.d.Trips) })},
	{"trips", "list", "run guards", "each trip: at (s into the window), source, kind, fatal, evidence", "", value(func(r *Run) starlark.Value { return tripList(r.d.Trips) })},
	{"late_observers", "list", "observers", "each observer whose first snapshot came after more than a tenth of the window's successful requests: observer, late_s (after the window opened), before (requests counted by then), requests (in all), left_out (its figures per request, left out when it saw none)", "", value(func(r *Run) starlark.Value { return lateList(r.lateObservers()) })},
	{"wall_ms", "list of ms", "exec (wait4)", "exec: each measured run's wall time", "", value(func(r *Run) starlark.Value { return starval.FloatList(r.d.WallMs) })},
	{"cpu_ms", "list of ms", "exec (wait4)", "exec: each run's user + system CPU", "", value(func(r *Run) starlark.Value { return starval.FloatList(r.d.CPUMs) })},
	{"user_ms", "list of ms", "exec (wait4)", "exec: each run's user CPU", "", value(func(r *Run) starlark.Value { return starval.FloatList(r.d.UserMs) })},
	{"sys_ms", "list of ms", "exec (wait4)", "exec: each run's system CPU", "", value(func(r *Run) starlark.Value { return starval.FloatList(r.d.SysMs) })},
	{"max_rss_kb", "list of KiB", "exec (wait4)", "exec: each run's peak resident size", "", value(func(r *Run) starlark.Value { return starval.IntList(r.d.MaxRSSKb) })},
	{"agents", "list", "fleet", "a fleet run: one row per agent (status, ok, rps, p99, cpu_us_per_req, cpu_share, late, dropped, clock offset)", "", value(func(r *Run) starlark.Value { return agentList(r.d.Agents) })},
	{"incomplete", "bool", "fleet", "a fleet run that lost an agent", "", value(func(r *Run) starlark.Value { return starlark.Bool(r.d.Incomplete) })},
	{"profile", "profile", "Linux perf (profile = True)", "the targets' on-CPU profile over the window: folded, functions (self/total share, µs per request), us_per_req, samples, resolved_share; None without profile", "", (*Run).profileValue},
}

// field is the table's entry for name, or nil.
func field(name string) *runField {
	for i := range runFields {
		if runFields[i].name == name {
			return &runFields[i]
		}
	}
	return nil
}

// jsonKey is the field's key in JSON, "" for none.
func (f *runField) jsonKey() string {
	switch f.json {
	case "":
		return f.name
	case "-":
		return ""
	}
	return f.json
}

// RunAttrs is the table as the reference shows it (runattrs.Markdown), and as
// observers' tests check a run's attribute names (Undocumented).
func RunAttrs() []runattrs.Attr {
	out := make([]runattrs.Attr, len(runFields))
	for i, f := range runFields {
		out[i] = runattrs.Attr{Name: f.name, Unit: f.unit, Source: f.from, Means: f.doc}
	}
	return out
}

// Undocumented lists the attributes of a run (v) that neither the table
// nor the observers' list (runattrs.Observed) describe: an observer's test
// calls it, so a new figure cannot go undocumented.
func Undocumented(v starlark.HasAttrs) []string {
	var out []string
	for _, name := range v.AttrNames() {
		if field(name) == nil && !runattrs.Known(name) {
			out = append(out, name)
		}
	}
	return out
}

// The getters' shapes.

func text(f func(*Run) string) func(*Run) (starlark.Value, error) {
	return func(r *Run) (starlark.Value, error) { return starlark.String(f(r)), nil }
}

func num(f func(*Run) float64) func(*Run) (starlark.Value, error) {
	return func(r *Run) (starlark.Value, error) { return starlark.Float(f(r)), nil }
}

func count(f func(*Run) int64) func(*Run) (starlark.Value, error) {
	return func(r *Run) (starlark.Value, error) { return starlark.MakeInt64(f(r)), nil }
}

func value(f func(*Run) starlark.Value) func(*Run) (starlark.Value, error) {
	return func(r *Run) (starlark.Value, error) { return f(r), nil }
}
