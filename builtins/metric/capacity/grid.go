package capacity

import (
	"math"
	"strconv"
)

// The levels a search measures: whole numbers (users) or a continuous load
// (a rate), stepped up by Factor from Lo, bisected down to the resolution,
// and stepped one resolution at a time past a level the repeats could not
// judge. Continuous levels are rounded to the fewest significant digits
// that keep them apart, so a checkpoint's key reads "1250", not
// "1249.9999999999998".

// adjacent says whether no level is left to measure between a and b.
func (s *search) adjacent(a, b float64) bool { return b-a <= s.step(a)*(1+1e-9) }

// step is the resolution at level x: Resolution, or Relative of x, at
// least 1 for whole numbers.
func (s *search) step(x float64) float64 {
	d := s.o.Resolution
	if s.o.Relative > 0 {
		d = s.o.Relative * x
	}
	if s.o.Integer {
		d = max(1, math.Floor(d))
	}
	return d
}

// up is the next level of the step-up after x, at most Hi.
func (s *search) up(x float64) float64 {
	y := x * s.o.Factor
	if s.o.Integer {
		y = max(x+1, math.Round(y))
	} else {
		y = s.between(x, y, math.Inf(1))
	}
	return min(y, s.o.Hi)
}

// mid is the level halfway between a and b: arithmetic for whole numbers,
// geometric for a continuous load with a relative resolution.
func (s *search) mid(a, b float64) float64 {
	if s.o.Integer {
		return math.Floor((a + b) / 2)
	}
	m := (a + b) / 2
	if s.o.Relative > 0 && a > 0 {
		m = math.Sqrt(a * b)
	}
	return s.between(a, m, b)
}

// below is the level one resolution under x, or -Inf under Lo.
func (s *search) below(x float64) float64 {
	if x <= s.o.Lo {
		return math.Inf(-1)
	}
	y := x - s.step(x)
	if s.o.Relative > 0 && !s.o.Integer {
		y = x / (1 + s.o.Relative)
	}
	if !s.o.Integer {
		y = s.between(math.Inf(-1), y, x)
	}
	return max(y, s.o.Lo)
}

// above is the level one resolution over x, or +Inf over Hi.
func (s *search) above(x float64) float64 {
	if x >= s.o.Hi {
		return math.Inf(1)
	}
	y := x + s.step(x)
	if !s.o.Integer {
		y = s.between(x, y, math.Inf(1))
	}
	return min(y, s.o.Hi)
}

// between rounds m to the fewest significant digits (at least 3) that
// keep it strictly between lo and hi.
func (s *search) between(lo, m, hi float64) float64 {
	for d := 3; d <= 15; d++ {
		r, _ := strconv.ParseFloat(strconv.FormatFloat(m, 'g', d, 64), 64)
		if r > lo && r < hi {
			return r
		}
	}
	return m
}
