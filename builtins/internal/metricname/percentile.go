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
