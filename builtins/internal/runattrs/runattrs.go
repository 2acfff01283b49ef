// Package runattrs is the table of the figures observers add to a run: units
// and sources. Those are db_cpu_us_per_req, buffers_per_req and the rest.
// The reference's table of run attributes (benchbook help workload) is the
// run's own fields (package workload's table, fields.go) followed by this
// list (Markdown), and every observer's tests check the figures it gives
// against it (Known), so neither the reference nor this list can drift from
// what a run holds.
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
	{"server_rss_peak_kb", false, "KiB", "process, backend.demo: /proc/PID/stat every 100 ms", "largest resident size seen"},
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

// Known reports whether an observer's figure of this name is in the table.
func Known(name string) bool {
	for _, a := range Observed {
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

// Markdown is the reference's table: the run's own attributes (run), then
// the observers' figures.
func Markdown(run []Attr) string {
	var b strings.Builder
	b.WriteString("| attribute | unit | from | what it is |\n| --- | --- | --- | --- |\n")
	for _, a := range append(append([]Attr(nil), run...), Observed...) {
		name := "`" + a.Name + "`"
		if a.PerReq {
			name += ", `" + a.Name + "_per_req`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, a.Unit, a.Source, strings.ReplaceAll(a.Means, "|", `\|`))
	}
	return b.String()
}

// Unknown lists the names of an observer's figures that the table does
// not list: observers' tests call it, so a new figure cannot go
// undocumented (a whole run's attributes: workload.Undocumented).
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
