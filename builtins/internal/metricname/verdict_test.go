package metricname

import (
	"testing"

	"github.com/benchbook/benchbook/runtime/stats"
)

// A metric's direction from its name decides compare's verdict: a 20 %
// higher write rate improves; 20 % more errors per second worsen. (Moved
// here from runtime/stats's paired tests, which cannot import this package.)
func TestDirectionDecidesTheVerdict(t *testing.T) {
	// level times a fixed ±2 % pattern, so the arms have noise without a
	// random seed (runtime/stats's noisy, with no drift).
	pattern := []float64{1.012, 0.991, 1.019, 0.983, 1.004, 0.996, 1.021, 0.979, 1.008, 0.988, 1.015, 0.993}
	noisy := func(n int, level float64, phase int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = level * pattern[(i+phase)%len(pattern)]
		}
		return xs
	}
	a, b := noisy(8, 100, 0), noisy(8, 120, 4)
	for name, want := range map[string]string{"write_mb_s": "IMPROVES", "errors_per_s": "WORSENS"} {
		better, _ := Direction(name)
		c, err := stats.Compare(a, b, stats.Options{Metric: name, Better: better})
		if err != nil {
			t.Fatal(err)
		}
		if c.Verdict != want {
			t.Errorf("%s 20 %% higher: %s, want %s", name, c.Verdict, want)
		}
	}
}
