package metricname

import "strings"

// Direction says which way a metric improves, from its name: "higher" for
// rates and counts of work done, "lower" for latency, time, cost and
// failure figures. ok is false when the name does not say; a caller then
// asks the user rather than guess (a default of "higher" once made
// compare(exp, metric = "p99") call a slower B an improvement).
//
// One table decides, checked in order:
//
//  1. exact names (rps, p99, errors, ...);
//  2. failure words anywhere in the name (error, retry, drop, fail,
//     timeout, ...): fewer is better even per second, so "errors_per_s" is
//     lower, not a rate;
//  3. rate suffixes, units per second included ("_per_s", "_mb_s",
//     "_bytes_per_s"), before the time suffixes they end in: "write_mb_s"
//     is a rate, not a time in seconds;
//  4. time, size and cost suffixes ("_ms", "_s", "_per_req", "_bytes").
//
// A name that is one of those units on its own ("mb_s", "kb_s", "ms") reads
// as the unit, before any suffix: a bare "mb_s" is a rate, not seconds.
//
// A tag's metric goes the way the metric does: "p99[read]" is lower.
func Direction(name string) (better string, ok bool) {
	name = strings.ToLower(strings.TrimSpace(Base(strings.TrimSpace(name))))
	if d, ok := directionByName[name]; ok {
		return d, true
	}
	if percentileName.MatchString(name) {
		return "lower", true
	}
	if CountsFailures(name) {
		return "lower", true
	}
	// A name that is a unit on its own is that unit: "mb_s" is a rate,
	// though it ends in "_s" (seconds) and not in "_mb_s".
	for _, s := range directionBySuffix {
		if name == strings.TrimPrefix(s.suffix, "_") {
			return s.better, true
		}
	}
	for _, s := range directionBySuffix {
		if strings.HasSuffix(name, s.suffix) {
			return s.better, true
		}
	}
	return "", false
}

var directionByName = map[string]string{
	"rps": "higher", "tps": "higher", "qps": "higher", "ops": "higher", "throughput": "higher",
	"count": "higher", "ok": "higher", "capacity": "higher",
	"mean": "lower", "median": "lower", "max": "lower", "min": "lower", "stddev": "lower",
	"latency": "lower", "errors": "lower", "dropped": "lower", "late": "lower", "undecided": "lower",
}

// CountsFailures reports whether a metric's name holds a failure word
// ("errors", "retries_per_s", "timeout_count"): whatever its unit, fewer
// is better.
func CountsFailures(name string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		if failureWords[w] {
			return true
		}
	}
	return false
}

// failureWords are the words of a name that count failures: whatever unit
// follows them, fewer is better.
var failureWords = map[string]bool{
	"error": true, "errors": true, "err": true, "errs": true,
	"retry": true, "retries": true, "retried": true,
	"drop": true, "drops": true, "dropped": true,
	"fail": true, "fails": true, "failed": true, "failure": true, "failures": true,
	"timeout": true, "timeouts": true, "refused": true, "rejected": true, "aborts": true, "aborted": true,
	"late": true, "undecided": true, "oom": true, "deadlocks": true, "conflicts": true,
}

var directionBySuffix = []struct{ suffix, better string }{
	{"_per_s", "higher"}, {"_per_sec", "higher"}, {"_per_second", "higher"}, {"/s", "higher"},
	{"_b_s", "higher"}, {"_kb_s", "higher"}, {"_mb_s", "higher"}, {"_gb_s", "higher"},
	{"_kib_s", "higher"}, {"_mib_s", "higher"}, {"_gib_s", "higher"}, {"_bytes_s", "higher"},
	{"_bps", "higher"}, {"_rows_s", "higher"}, {"_ops_s", "higher"}, {"_req_s", "higher"},
	{"_rps", "higher"}, {"_tps", "higher"}, {"_qps", "higher"}, {"_ops", "higher"}, {"_throughput", "higher"},
	{"_ms", "lower"}, {"_us", "lower"}, {"_ns", "lower"}, {"_s", "lower"}, {"_seconds", "lower"},
	{"_latency", "lower"}, {"_per_req", "lower"}, {"_per_op", "lower"}, {"_per_tx", "lower"},
	{"_bytes", "lower"}, {"_kb", "lower"}, {"_mb", "lower"}, {"_errors", "lower"},
}
