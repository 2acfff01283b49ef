// Package metricname reads what a metric's name says, without Starlark:
// which way the metric improves (Direction: "rps" higher, "p99" and
// "errors_per_s" lower) and which percentile it is (Percentile: "p999" is
// 99.9). The statistics (builtins/metric), the value readers
// (builtins/internal/starval) and the plots read names through it, so a
// name means one thing everywhere.
package metricname

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// percentileName matches latency percentiles: p50, p99, p999, p99.9.
var percentileName = regexp.MustCompile(`^p([0-9]+(?:\.[0-9]+)?)$`)

// Percentile reads "p99" as 99 and "p999" as 99.9: the usual shorthand
// where digits after the first two are decimals ("p99.9" works too).
func Percentile(name string) (float64, bool) {
	m := percentileName.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	digits := m[1]
	q, _ := strconv.ParseFloat(digits, 64)
	if len(digits) > 2 && digits != "100" && !strings.Contains(digits, ".") {
		q /= math.Pow(10, float64(len(digits)-2))
	}
	return q, true
}

// Tagged splits a metric of a tag of a run, "p99[read]", into the metric
// ("p99") and the tags ("read"); a scenario's tag nests: "p99[reads][read]"
// is tag "read" of scenario "reads". ok is false for a name without tags;
// a malformed one ("p99[read", "p99[]x") is returned whole, not ok, and
// reads as an unknown name.
func Tagged(name string) (base string, tags []string, ok bool) {
	i := strings.IndexByte(name, '[')
	if i <= 0 || !strings.HasSuffix(name, "]") {
		return name, nil, false
	}
	base, rest := name[:i], name[i:]
	for rest != "" {
		if rest[0] != '[' {
			return name, nil, false
		}
		end := strings.IndexByte(rest, ']')
		tag := rest[1:max(end, 1)]
		if end < 0 || strings.TrimSpace(tag) == "" || strings.ContainsAny(tag, "[") {
			return name, nil, false
		}
		tags, rest = append(tags, tag), rest[end+1:]
	}
	return base, tags, true
}

// Base is a metric's name without its tags: "p99[read]" is "p99".
func Base(name string) string {
	base, _, _ := Tagged(name)
	return base
}
