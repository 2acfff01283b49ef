// Package runattrs is the one table of a run's attributes: every name a
// workload's run answers to, its unit and where its figure comes from, the
// observers' figures included (db_cpu_us_per_req, buffers_per_req, ...).
// The README's table is generated from it, the workload package checks
// its own attributes against it, and every observer's tests check the
// figures it gives (Known), so neither the README nor this list can drift
// from what a run holds.
package runattrs

import (
	"fmt"
	"regexp"
	"strings"
)

// Attr is one attribute of a run.
type Attr struct {
	Name   string // the attribute; <word> stands for any name (mongo_cmd_<command>)
	PerReq bool   // NAME_per_req exists too: the total over the window divided by its successful requests
	Unit   string // of the value (of the total when PerReq)
	Source string // what measures it
	Means  string // what it is
}

// Run lists the attributes every run has (some only for one kind: the
// Means says which), as package workload gives them.
var Run = []Attr{
	{"kind", false, "text", "workload", `"http", "sql", "mongo" or "exec"`},
	{"label", false, "text", "workload", "what ran (the URL, the statement, label = ...)"},
	{"duration", false, "s", "workload", "length of the measurement window"},
	{"warmup_s", false, "s", "load generator", "warm-up before the window: the given warmup, or how long warmup = \"auto\" took to settle"},
	{"intended", false, "requests", "load generator", "requests due (open loop) or started (closed loop) in the window"},
	{"count", false, "requests", "load generator", "successful requests in the window"},
	{"errors", false, "dict of requests", "load generator", "failed requests by class (refused, timeout, status 500, sqlstate 40001, ...)"},
	{"dropped", false, "requests", "load generator", "open loop: given up unsent, a timeout or more late"},
	{"late", false, "requests", "load generator", "open loop: sent more than 10 ms after their intended start"},
	{"undecided", false, "requests", "load generator", "Ctrl-C came before their outcome"},
	{"rps", false, "requests/s", "load generator", "count / duration"},
	{"p", false, "ms", "load generator (HDR histogram)", "p(q): latency percentile q of every decided request, failures and drops as lower bounds"},
	{"ok_p", false, "ms", "load generator (HDR histogram)", "ok_p(q): latency percentile q of the successes alone"},
	{"hist", false, "histogram (ms)", "load generator", "every decided request's latency"},
	{"ok_hist", false, "histogram (ms)", "load generator", "the successes' latency"},
	{"mean", false, "ms", "load generator", "mean latency (exec: of the measured runs' wall times)"},
	{"max", false, "ms", "load generator", "highest latency (exec: slowest run)"},
	{"min", false, "ms", "load generator", "exec: fastest run; else the lowest latency"},
	{"stddev", false, "ms", "load generator", "exec: standard deviation of the wall times; else of the latencies"},
	{"service", false, "histogram (ms)", "load generator", "open loop: service time, from the send (None in a closed loop)"},
	{"by_tag", false, "dict of histograms", "load generator", "sql: latency per tagged statement"},
	{"acquire", false, "histogram (ms)", "pgx pool", "sql: waits to acquire a pooled connection"},
	{"windows", false, "list", "load generator", "per window (window = ...): start (s), count, rps, p50 and p99 (ms), errors"},
	{"tick_ms", false, "ms", "load generator", "open loop: the tick it sent on (0: each request at its intended start)"},
	{"gen_cpu_us_per_req", false, "µs per request", "load generator (getrusage)", "the generator's own CPU per decided request"},
	{"gen_gc_pause_ms", false, "ms", "load generator (Go runtime)", "the generator's GC pauses over the window (summed over a fleet's agents)"},
	{"interrupted", false, "bool", "workload", "Ctrl-C ended the run early"},
	{"warnings", false, "list of text", "workload, observers, guards", "non-fatal problems: a saturated generator, late answers, guard warnings"},
	{"valid", false, "bool", "run guards", "no guard tripped fatally (see Run guards)"},
	{"invalid_reason", false, "text", "run guards", "the first fatal trip, or \"\""},
	{"trips", false, "list", "run guards", "each trip: at (s into the window), source, kind, fatal, evidence"},
	{"wall_ms", false, "list of ms", "exec (wait4)", "exec: each measured run's wall time"},
	{"cpu_ms", false, "list of ms", "exec (wait4)", "exec: each run's user + system CPU"},
	{"user_ms", false, "list of ms", "exec (wait4)", "exec: each run's user CPU"},
	{"sys_ms", false, "list of ms", "exec (wait4)", "exec: each run's system CPU"},
	{"max_rss_kb", false, "list of KiB", "exec (wait4)", "exec: each run's peak resident size"},
	{"agents", false, "list", "fleet", "a fleet run: one row per agent (status, ok, rps, p99, cpu_us_per_req, cpu_share, late, dropped, clock offset)"},
	{"incomplete", false, "bool", "fleet", "a fleet run that lost an agent"},
	{"profile", false, "profile", "Linux perf (profile = True)", "the targets' on-CPU profile over the window: folded, functions (self/total share, µs per request), us_per_req, samples, resolved_share; None without profile"},
}

// Observed lists the figures observers add (observe = [...]), by the
// names they give.
var Observed = []Attr{
	{"foreign_cpu", false, "cores", "the box: /proc/stat and /proc of this process, the targets and host.observe's pids", "CPU other processes used, averaged over the window (every run)"},
	{"steal_cpu", false, "cores", "the box: /proc/stat", "CPU the hypervisor gave other guests, averaged over the window (every run)"},
	{"load1", false, "processes", "the box: /proc/loadavg", "the 1-minute load average over the window: the mean of its readings at the window's two ends (every run)"},
	{"db_cpu_us", true, "µs", "PostgreSQL: /proc of its client backends", "CPU the backends serving the run used"},
	{"db_cpu_us_bg", true, "µs", "PostgreSQL: /proc of the postmaster and its workers", "CPU of background processes (checkpointer, walwriter, autovacuum)"},
	{"buffers", true, "blocks (8 KiB)", "PostgreSQL: pg_stat_statements", "shared buffers hit + read"},
	{"shared_read", true, "blocks (8 KiB)", "PostgreSQL: pg_stat_statements", "shared buffers read from outside the buffer cache"},
	{"wal_bytes", true, "bytes", "PostgreSQL: pg_current_wal_lsn() difference", "WAL written"},
	{"plan_exec_ms", true, "ms", "PostgreSQL: pg_stat_statements", "planning + execution time"},
	{"statements", true, "statements", "PostgreSQL: pg_stat_statements", "statements executed"},
	{"walwrite_waiters_max", false, "backends", "PostgreSQL: pg_stat_activity, sampled every 200 ms", "most client backends seen waiting on WALWrite"},
	{"lock_waiters_max", false, "backends", "PostgreSQL: pg_stat_activity, sampled every 200 ms", "most client backends seen waiting on a lock"},
	{"active_backends_max", false, "backends", "PostgreSQL: pg_stat_activity, sampled every 200 ms", "most active client backends seen"},
	{"wait_samples", false, "samples", "PostgreSQL: pg_stat_activity", "samples taken for the three figures above"},
	{"server_cpu_us", true, "µs", "process: /proc/PID/stat; container or limited target: its cgroup", "CPU the target used"},
	{"server_cpu_s", false, "s", "backend.demo: /proc/PID/stat", "CPU the demo target used (with server_cpu_us_per_req)"},
	{"server_rss_peak_kb", false, "KiB", "process, backend.demo: /proc/PID/statm every 100 ms", "largest resident size seen"},
	{"server_cpu_cores", false, "cores", "container or limited target: cgroup", "CPU time over wall time"},
	{"mem_anon_kb", false, "KiB", "cgroup", "anonymous memory at the window's end"},
	{"mem_anon_peak_kb", false, "KiB", "cgroup", "most anonymous memory seen (sampled every 100 ms)"},
	{"mem_cache_kb", false, "KiB", "cgroup", "page cache at the window's end"},
	{"mem_high_water_kb", false, "KiB", "cgroup", "most memory charged (sampled every 100 ms)"},
	{"io_read_bytes", false, "bytes", "cgroup (blkio / io.stat)", "bytes read from block devices"},
	{"io_write_bytes", false, "bytes", "cgroup (blkio / io.stat)", "bytes written to block devices"},
	{"oom_kills", false, "kills", "cgroup (memory.oom_control / memory.events)", "processes the OOM killer ended"},
	{"cpu_throttled", false, "periods", "cgroup (cpu.stat)", "quota periods the group was throttled"},
	{"docs_per_req", false, "documents per request", "workload.mongo", "documents read or written per successful request"},
	{"mongo_cpu_us", true, "µs", "MongoDB: /proc of the server (loopback)", "CPU the server used"},
	{"mongo_cmd_<command>", true, "commands", "MongoDB: serverStatus metrics.commands", "commands of each kind (find, insert, ...); mongo_cmd_failed: those that failed"},
	{"mongo_op_<kind>", true, "operations", "MongoDB: serverStatus opcounters", "operations by kind"},
	{"mongo_docs_<kind>", true, "documents", "MongoDB: serverStatus metrics.document", "documents returned, inserted, updated, deleted"},
	{"mongo_keys_examined", true, "keys", "MongoDB: serverStatus metrics.queryExecutor", "index keys examined"},
	{"mongo_docs_examined", true, "documents", "MongoDB: serverStatus metrics.queryExecutor", "documents examined"},
	{"mongo_wt_read_bytes", true, "bytes", "MongoDB: serverStatus wiredTiger.cache", "bytes read into the WiredTiger cache"},
	{"mongo_connections", false, "connections", "MongoDB: serverStatus", "open connections at the window's end"},
	{"mongo_wt_cache_bytes", false, "bytes", "MongoDB: serverStatus wiredTiger.cache", "bytes in the cache at the window's end"},
	{"mongo_coll_<name>_<figure>", false, "documents, bytes, indexes", "MongoDB: collStats", "per listed collection: docs, bytes, storage_bytes, index_bytes, indexes"},
	{"<count>", true, "lines", "target.watch(count = {...}): the target's log", "log lines matching each count pattern over the window"},
}

// All is every attribute, the run's own first.
func All() []Attr { return append(append([]Attr(nil), Run...), Observed...) }

// Known reports whether a run attribute of this name is in the table.
func Known(name string) bool {
	for _, a := range All() {
		if a.Name == "<count>" {
			continue // any name: only what an observer listed above is checked
		}
		re := a.pattern()
		if re.MatchString(name) || a.PerReq && re.MatchString(strings.TrimSuffix(name, "_per_req")) && strings.HasSuffix(name, "_per_req") {
			return true
		}
	}
	return false
}

func (a Attr) pattern() *regexp.Regexp {
	parts := regexp.MustCompile(`<[a-z]+>`).Split(a.Name, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, "[A-Za-z0-9_]+") + "$")
}

// Markdown is the README's table.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| attribute | unit | from | what it is |\n| --- | --- | --- | --- |\n")
	for _, a := range All() {
		name := "`" + a.Name + "`"
		if a.PerReq {
			name += ", `" + a.Name + "_per_req`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, a.Unit, a.Source, strings.ReplaceAll(a.Means, "|", `\|`))
	}
	return b.String()
}

// Unknown lists the names (an observer's figures, a run's attributes)
// that the table does not list: observers' tests call it, so a new figure
// cannot go undocumented.
func Unknown(names []string) []string {
	var out []string
	for _, name := range names {
		if !Known(name) {
			out = append(out, name)
		}
	}
	return out
}

// Names are the keys of an observer's figures.
func Names(figures map[string]float64) []string {
	out := make([]string, 0, len(figures))
	for k := range figures {
		out = append(out, k)
	}
	return out
}
