package stats

import (
	"math"
	"strconv"
)

// Shown is an index and its interval as the record prints them: all three
// with the same decimals, the bounds rounded outward (the lower one down,
// the upper one up) and the index to nearest, so the shown index always
// lies inside the shown interval and a shown interval is never narrower
// than the computed one. Every place that shows an index takes it from
// here (the sentence, c.index, the JSON record, the text bars), so no
// place rounds it on its own.
type Shown struct {
	Index, Low, High string // Low and High "" when there is no interval
	Decimals         int
}

// Value is the shown index as a number: c.index and the JSON record's
// "index". It has at most four significant digits, so a table that shows
// four (fmtnum.Float) shows it unchanged and inside the interval.
func (s Shown) Value() float64 {
	v, err := strconv.ParseFloat(s.Index, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// maxShownDecimals bounds the precision of a shown index: an interval
// narrower than a thousandth of an index point is shown that wide.
const maxShownDecimals = 3

// maxShownDigits bounds the significant digits of a shown index from 1 up:
// the record's tables show four (fmtnum.Float), and a notebook puts
// c.index in a table beside c.ci_range, so a fifth digit would be rounded
// away there and could land the index outside the interval beside it
// (100.640 in 100.636 to 100.644 shown as 100.6). An interval narrower
// than the fourth digit is shown that wide: 100.6 to 100.7, never narrower.
const maxShownDigits = 4

// ShowIndex formats an index (100 × a ratio) with its interval, in index
// units; low and high are NaN when there is no interval. The decimals
// are enough for two significant digits of the index (0.19, 5.3, 121) and
// for the interval's width to show (99.6 to 100.3, not 100 to 100), up to
// three decimals and four significant digits.
func ShowIndex(index, low, high float64) Shown {
	d := sigDecimals(index)
	if !math.IsNaN(low) && !math.IsNaN(high) {
		d = max(d, sigDecimals(low), widthDecimals(high-low, index))
	}
	d = min(d, maxShownDecimals, digitsDecimals(index))
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

// digitsDecimals is the most decimals that keep x to maxShownDigits
// significant digits; below 1 the decimals alone bound it.
func digitsDecimals(x float64) int {
	x = math.Abs(x)
	if x < 1 || math.IsNaN(x) || math.IsInf(x, 0) {
		return maxShownDecimals
	}
	return max(0, maxShownDigits-int(math.Floor(math.Log10(x)))-1)
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
