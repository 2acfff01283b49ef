package stats

import (
	"math"
	"strconv"
)

// Step is the resolution values come in: the largest 1, 2 or 5 times a
// power of ten that every value is a whole multiple of (1 for integer
// counts, 5 for latencies rounded to 5 ms, 0.01 for figures printed with
// two decimals). Measured floating-point figures give a step near their
// last digit, which widens nothing; 0 for no values or a zero.
func Step(xs []float64) float64 {
	top := 0.0
	for _, x := range xs {
		top = math.Max(top, math.Abs(x))
	}
	if top == 0 || math.IsNaN(top) || math.IsInf(top, 0) {
		return 0
	}
	for k := int(math.Floor(math.Log10(top))); k >= int(math.Floor(math.Log10(top)))-15; k-- {
		for _, c := range []float64{5, 2, 1} {
			s := c * math.Pow(10, float64(k))
			if multiples(xs, s) {
				return s
			}
		}
	}
	return 0
}

func multiples(xs []float64, s float64) bool {
	for _, x := range xs {
		q := x / s
		if math.Abs(q-math.Round(q)) > 1e-6 || math.Round(q) == 0 {
			return false
		}
	}
	return true
}

// RoundingBias bounds how far rounding to step can move an arm's typical
// value: half a step when the runs do not vary (their rounding errors are
// then one and the same), falling off as exp(-2π²σ²/step²) with their
// spread σ, the rate at which the mean rounding error of a spread-out
// sample vanishes (Sheppard; the first Fourier term of the rounding
// error), kept at twice that term so the bound stays above it. Values
// spread over a few steps have rounding errors that average out like
// noise, and the rank interval already holds them.
func RoundingBias(xs []float64, step float64) float64 {
	if step == 0 {
		return 0
	}
	sigma := 0.0
	if len(xs) > 1 {
		sigma = stddev(xs)
	}
	r := sigma / step
	return step / 2 * math.Min(1, 2*math.Exp(-2*math.Pi*math.Pi*r*r))
}

func fmtStep(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
