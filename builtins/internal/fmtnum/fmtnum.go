// Package fmtnum is how benchbook writes a number for a reader: about four
// significant digits, thousands grouped. The record's tables, the verdicts'
// figures and the exported HTML write numbers with it, so a figure reads the
// same wherever it is shown.
package fmtnum

import (
	"math"
	"strconv"
	"strings"
)

// Float keeps about four significant digits, no exponent in the
// everyday range: 1,234,568  12.35  0.001235  1.235e-07.
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case f == 0:
		return "0"
	}
	a := math.Abs(f)
	if a >= 1e15 || a < 1e-4 {
		return strconv.FormatFloat(f, 'g', 4, 64)
	}
	intDigits := int(math.Floor(math.Log10(a))) + 1
	s := strconv.FormatFloat(f, 'f', max(0, 4-intDigits), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return GroupDigits(s)
}

// GroupDigits puts thousands separators in the integer part of numbers of
// five digits or more (a year or a port number stays as is).
func GroupDigits(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	if len(intPart) < 5 {
		return sign + s
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String() + frac
}

// Finite is f, or 0 when it is NaN or infinite (the mean of no values): for
// a file whose readers take no NaN (CSV cells, .hgrm's footer).
func Finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
