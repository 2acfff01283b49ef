package metricname

import (
	"strconv"
	"strings"
)

// SummaryQuantiles are the latency percentiles every summary of a latency
// distribution shows: a run's table, a histogram's table and JSON, and
// export.csv's columns.
var SummaryQuantiles = []float64{50, 90, 99, 99.9}

// QuantileKey is q as a column or JSON key, in the shorthand Percentile
// reads back: 50 is "p50", 99.9 "p999".
func QuantileKey(q float64) string {
	return "p" + strings.ReplaceAll(strconv.FormatFloat(q, 'f', -1, 64), ".", "")
}
