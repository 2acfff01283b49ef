package loadgen

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from HistMin to HistMax (one
// hour), with three significant digits for the run and two for each window.
const (
	HistMin     = 1
	HistMax     = 3_600_000_000
	histDigits  = 3
	windowDigit = 2
)

// NewHist is an empty latency histogram of a run's resolution.
func NewHist() *hdrhistogram.Histogram { return hdrhistogram.New(HistMin, HistMax, histDigits) }

func newWindowHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistMin, HistMax, windowDigit)
}

// QuantileMs is h's q-th percentile (0..100) in milliseconds.
func QuantileMs(h *hdrhistogram.Histogram, q float64) float64 {
	return UsToMs(h.ValueAtQuantile(q))
}

// UsToMs converts a histogram value to milliseconds.
func UsToMs(us int64) float64 { return float64(us) / 1000 }

// FormatMs prints a latency in ms with about three significant digits.
func FormatMs(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2f ms", ms)
	}
	return fmt.Sprintf("%.3f ms", ms)
}
