package stats

import (
	"math"
	"strconv"
)

// Shown is an index and its interval as the record prints them: all three
// with the same decimals, the bounds rounded outward (the lower one down,
// the upper one up) and the index to nearest, so the shown index always
// lies inside the shown interval and a shown interval is never narrower
// than the computed one.
type Shown struct {
	Index, Low, High string // Low and High "" when there is no interval
	Decimals         int
}

// maxShownDecimals bounds the precision of a shown index: an interval
// narrower than a thousandth of an index point is shown that wide.
const maxShownDecimals = 3

// ShowIndex formats an index (100 × a ratio) with its interval, in index
// units; low and high are NaN when there is no interval. The decimals
// are enough for two significant digits of the index (0.19, 5.3, 121) and
// for the interval's width to show (99.6 to 100.3, not 100 to 100).
func ShowIndex(index, low, high float64) Shown {
	d := sigDecimals(index)
	if !math.IsNaN(low) && !math.IsNaN(high) {
		d = max(d, sigDecimals(low), widthDecimals(high-low, index))
	}
	d = min(d, maxShownDecimals)
	s := Shown{Index: fmtFixed(roundAt(index, d, math.Round), d), Decimals: d}
	if !math.IsNaN(low) && !math.IsNaN(high) {
		s.Low = fmtFixed(roundAt(low, d, math.Floor), d)
		s.High = fmtFixed(roundAt(high, d, math.Ceil), d)
	}
	return s
}

// sigDecimals is the decimals that show two significant digits of x
// below 10, none from 10 up.
func sigDecimals(x float64) int {
	x = math.Abs(x)
	if x >= 10 || x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return int(1 - math.Floor(math.Log10(x)))
}

// widthDecimals is the fewest decimals at which a width spans at least two
// units of the last digit; none for a width that is floating-point noise
// on the scale of the index.
func widthDecimals(w, scale float64) int {
	if w <= 1e-9*math.Abs(scale) {
		return 0 // no width to show: the interval is a point
	}
	d := 0
	for d < maxShownDecimals && w < 2*math.Pow(10, -float64(d)) {
		d++
	}
	return d
}

func roundAt(x float64, d int, f func(float64) float64) float64 {
	p := math.Pow(10, float64(d))
	// A bound that is exactly on a digit stays there: 96.99999999 from
	// floating point must not show as 96.9 when it is 97.
	v := x * p
	if r := math.Round(v); math.Abs(v-r) < 1e-9*math.Max(1, math.Abs(v)) {
		v = r
	}
	return f(v) / p
}

func fmtFixed(x float64, d int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', d, 64)
}
