package fmtnum

import (
	"math"
	"testing"
)

func TestFloat(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0", 1: "1", 12.3456: "12.35", -0.5: "-0.5", 999.96: "1000", 12345.6: "12,346",
		1e-7: "1e-07", 2.5e20: "2.5e+20", 100: "100", 0.012344: "0.01234",
	} {
		if got := Float(in); got != want {
			t.Errorf("Float(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestFinite(t *testing.T) {
	for in, want := range map[float64]float64{math.NaN(): 0, math.Inf(1): 0, math.Inf(-1): 0, 0: 0, -1.5: -1.5, math.MaxFloat64: math.MaxFloat64} {
		if got := Finite(in); got != want {
			t.Errorf("Finite(%v) = %v, want %v", in, got, want)
		}
	}
}
