package stats

import (
	"regexp"
	"strings"
)

// Direction says which way a metric improves, from its name: "higher" for
// rates and counts of work done, "lower" for latency, time, cost and
// failure figures. ok is false when the name does not say; a caller then
// asks the user rather than guess (a default of "higher" once made
// compare(exp, metric = "p99") call a slower B an improvement).
//
// One table decides, checked in order: exact names, then suffixes, with
// rate suffixes before the time suffixes they end in ("ops_per_s" is a
// rate, not a time in seconds).
func Direction(name string) (better string, ok bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if d, ok := directionByName[name]; ok {
		return d, true
	}
	if percentileName.MatchString(name) {
		return "lower", true
	}
	for _, s := range directionBySuffix {
		if strings.HasSuffix(name, s.suffix) {
			return s.better, true
		}
	}
	return "", false
}

// percentileName matches latency percentiles: p50, p99, p999, p99.9.
var percentileName = regexp.MustCompile(`^p[0-9]+(\.[0-9]+)?$`)

var directionByName = map[string]string{
	"rps": "higher", "tps": "higher", "qps": "higher", "ops": "higher", "throughput": "higher",
	"count": "higher", "ok": "higher",
	"mean": "lower", "median": "lower", "max": "lower", "min": "lower", "stddev": "lower",
	"latency": "lower", "errors": "lower", "dropped": "lower", "late": "lower", "undecided": "lower",
}

var directionBySuffix = []struct{ suffix, better string }{
	{"_per_s", "higher"}, {"_per_sec", "higher"}, {"_per_second", "higher"}, {"/s", "higher"},
	{"_rps", "higher"}, {"_tps", "higher"}, {"_qps", "higher"}, {"_ops", "higher"}, {"_throughput", "higher"},
	{"_ms", "lower"}, {"_us", "lower"}, {"_ns", "lower"}, {"_s", "lower"}, {"_seconds", "lower"},
	{"_latency", "lower"}, {"_per_req", "lower"}, {"_per_op", "lower"}, {"_per_tx", "lower"},
	{"_bytes", "lower"}, {"_kb", "lower"}, {"_mb", "lower"}, {"_errors", "lower"},
}
