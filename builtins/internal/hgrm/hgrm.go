// Package hgrm writes a latency histogram as HdrHistogram's percentile
// distribution text (.hgrm), which wrk2 and the HdrHistogram plotter read:
// export.hgrm and a run's download both write it here.
package hgrm

import (
	"fmt"
	"math"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/internal/fmtnum"
)

// Options shape the percentile distribution text.
type Options struct {
	TicksPerHalf int32   // percentile ticks per halving of the distance to 100% (HdrHistogram's default: 5)
	Scale        float64 // divides recorded values: 1000 turns µs into ms
}

// Text writes h as HdrHistogram's Java outputPercentileDistribution does:
// the header, one line per percentile tick (value, percentile as a
// fraction, cumulative count, 1/(1-percentile)), the last line at 100%
// without the inverse, and the mean/max/buckets footer. wrk2 and the
// HdrHistogram plotter read this format.
func Text(h *hdrhistogram.Histogram, o Options) string {
	if o.TicksPerHalf <= 0 {
		o.TicksPerHalf = 5
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	digits := int(h.SignificantFigures())
	var b strings.Builder
	fmt.Fprintf(&b, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	if h.TotalCount() > 0 {
		for _, br := range h.CumulativeDistributionWithTicks(o.TicksPerHalf) {
			v := float64(br.ValueAt) / o.Scale
			if br.Quantile >= 100 {
				fmt.Fprintf(&b, "%12.*f %2.12f %10d\n", digits, v, 1.0, br.Count)
				continue
			}
			q := br.Quantile / 100
			fmt.Fprintf(&b, "%12.*f %2.12f %10d %14.2f\n", digits, v, q, br.Count, 1/(1-q))
		}
	}
	fmt.Fprintf(&b, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", digits, fmtnum.Finite(h.Mean()/o.Scale), digits, fmtnum.Finite(h.StdDev()/o.Scale))
	fmt.Fprintf(&b, "#[Max     = %12.*f, Total count    = %12d]\n", digits, float64(h.Max())/o.Scale, h.TotalCount())
	fmt.Fprintf(&b, "#[Buckets = %12d, SubBuckets     = %12d]\n", bucketCount(h), subBucketCount(h))
	return b.String()
}

// bucketCount and subBucketCount recompute the histogram's geometry as
// HdrHistogram defines it (the Go type keeps them private).
func subBucketCount(h *hdrhistogram.Histogram) int64 {
	largest := 2 * math.Pow(10, float64(h.SignificantFigures()))
	return int64(math.Pow(2, math.Ceil(math.Log2(largest))))
}

func bucketCount(h *hdrhistogram.Histogram) int64 {
	unit := int64(math.Floor(math.Log2(float64(max(1, h.LowestTrackableValue())))))
	smallestUntrackable := subBucketCount(h) << unit
	n := int64(1)
	for smallestUntrackable <= h.HighestTrackableValue() {
		if smallestUntrackable > math.MaxInt64/2 {
			return n + 1
		}
		smallestUntrackable <<= 1
		n++
	}
	return n
}
