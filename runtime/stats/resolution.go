package stats

import (
	"fmt"
	"math"
	"slices"
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

// Resolution is the step the values come in when the data show it: the
// Step of both arms when two runs of one arm read neighbouring values of
// that grid (one step apart: a grid finer than the arm's spread, on which
// the runs lie); else 0, and the values are taken as exact. Values that are
// merely round are not a grid: [200]*16 against [100]*16 are exact counts
// as far as anything can tell (statements, rows, allocations per request),
// and reading them as rounded to steps of 100 gave an interval of 20 to
// 100 for a ratio of exactly 0.5 (issue 47); nor are runs of 100 and 1000
// beside 105 and 900 on a grid of 5. A notebook whose values are rounded
// says so (Options.Resolution).
func Resolution(a, b []float64) float64 {
	step := Step(append(append([]float64(nil), a...), b...))
	if step == 0 || !(neighbours(a, step) || neighbours(b, step)) {
		return 0
	}
	return step
}

// neighbours reports whether two of xs are one step apart.
func neighbours(xs []float64, step float64) bool {
	s := slices.Sorted(slices.Values(xs))
	for i := 1; i < len(s); i++ {
		if gap := s[i] - s[i-1]; gap > 0 && gap <= step*(1+1e-9) {
			return true
		}
	}
	return false
}

// roundButExact says, when the values lie on a visible grid that
// Resolution did not take (no two runs of an arm one step apart), that
// they were taken as exact and how to say otherwise; "" when there is
// nothing to say.
func roundButExact(a, b []float64) string {
	all := append(append([]float64(nil), a...), b...)
	step := Step(all)
	// A step under 1 % of the values moves them by half a percent at most
	// (rps from counts over 2 s come in halves): nothing to say.
	if step == 0 || step < 0.01*slices.Min(all) || Resolution(a, b) != 0 {
		return ""
	}
	return fmt.Sprintf("the values are whole multiples of %s and no two runs of an arm lie one step apart: taken as exact, as counts are; "+
		"if they were rounded to steps of %s, say so (resolution = %s) and the interval widens for what rounding could hide",
		fmtStep(step), fmtStep(step), fmtStep(step))
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
