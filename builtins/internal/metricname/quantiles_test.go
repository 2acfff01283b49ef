package metricname

import "testing"

// Every summary quantile's key reads back as that quantile.
func TestQuantileKeyReadsBack(t *testing.T) {
	for _, q := range append(SummaryQuantiles, 99.99, 75) {
		if back, ok := Percentile(QuantileKey(q)); !ok || back != q {
			t.Errorf("QuantileKey(%v) = %q, which reads back as %v, %v", q, QuantileKey(q), back, ok)
		}
	}
}
