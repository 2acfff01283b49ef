package profile

import (
	"fmt"
	"math"

	moremath "github.com/aclements/go-moremath/stats"
)

// pairedTest is the one place this package computes paired statistics,
// on go-moremath (the mean, the t distribution), so that the package sits
// below the modules and imports none of them. The
// differences are in µs per request and may be 0 or negative, so no ratio
// or log is taken: a paired t on the differences B_i - A_i gives the
// estimate (their mean), a two-sided p, and an interval at any confidence
// (the differential needs one per level its multiplicity rule sets).
//
// floor is the smallest spread the differences can honestly have: a
// profile counts whole samples, so a difference known to better than one
// sample's worth is not known; a set of equal differences gets that
// spread instead of a zero-width interval.
type pairedResult struct {
	n        int
	estimate float64
	p        float64 // two-sided, NaN with fewer than 2 pairs
	se       float64
	method   string
	absent   *absence // the function was sampled in only one arm: absentTest
}

// absence is a function sampled in every run of one arm and in no run of
// the other. The other arm's zeros are evidence, but not a zero-width
// one: a function costing μ µs per request there would have been sampled
// μ × exposure times on average (exposure = Σ 1/q over its runs, q one
// sample's worth of µs per request), so seeing none bounds μ by
// -ln(α) / exposure at level α (Poisson). The interval for B - A is the
// present arm's paired t interval (sd floored at its own quantum) widened
// by that bound on the absent side, the two at α/2 each (Bonferroni); p is
// the smallest α at which it excludes 0, so the two agree.
type absence struct {
	sign     float64 // +1: absent in A (B - A = +B), -1: absent in B
	mean, se float64 // of the present arm's values
	exposure float64 // of the absent arm
}

// absentTest tests a function present in every run of one arm (values,
// with floor the sd floor of that arm) and in no run of the other, whose
// exposure is given; sign is +1 when A is the absent arm.
func absentTest(values []float64, floor, exposure, sign float64) pairedResult {
	n := len(values)
	a := &absence{sign: sign, mean: moremath.Mean(values), exposure: exposure}
	r := pairedResult{n: n, estimate: sign * a.mean, p: nan, se: nan, absent: a,
		method: fmt.Sprintf("sampled in every run of one arm and in none of the other: a t interval on the %d runs where it is, widened by the Poisson bound on what the other arm's sampling could have missed", n)}
	if n < 2 || exposure <= 0 {
		return r
	}
	sd := 0.0
	for _, x := range values {
		sd += (x - a.mean) * (x - a.mean)
	}
	a.se = max(math.Sqrt(sd/float64(n-1)), floor) / math.Sqrt(float64(n))
	r.se = a.se
	// p: the smallest alpha whose interval excludes 0, by bisection on
	// log(alpha) (the interval's inner end grows with alpha).
	inner := func(alpha float64) float64 {
		lo, hi := r.interval(1 - alpha)
		return min(math.Abs(lo), math.Abs(hi)) * sgn(lo*hi)
	}
	if inner(1) <= 0 {
		r.p = 1
		return r
	}
	lo, hi := -700.0, 0.0 // log(alpha), to within 1e-9
	for range 40 {
		mid := (lo + hi) / 2
		if inner(math.Exp(mid)) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	r.p = math.Exp(hi)
	return r
}

func sgn(x float64) float64 {
	if x > 0 {
		return 1
	}
	return -1
}

func pairedTest(d []float64, floor float64) pairedResult {
	r := pairedResult{n: len(d), estimate: moremath.Mean(d), p: nan, se: nan,
		method: fmt.Sprintf("paired t on the B - A differences of %d pairs, %d df", len(d), len(d)-1)}
	if len(d) < 2 {
		return r
	}
	sd := 0.0
	for _, x := range d {
		sd += (x - r.estimate) * (x - r.estimate)
	}
	sd = math.Sqrt(sd / float64(len(d)-1))
	sd = max(sd, floor)
	r.se = sd / math.Sqrt(float64(len(d)))
	if r.se == 0 {
		r.p = 1 // every difference is exactly 0 and nothing bounds it
		return r
	}
	t := math.Abs(r.estimate) / r.se
	r.p = 2 * (1 - tdist(len(d)-1).CDF(t))
	return r
}

// interval is the two-sided interval at confidence.
func (r pairedResult) interval(confidence float64) (lo, hi float64) {
	if r.n < 2 || math.IsNaN(r.se) {
		return nan, nan
	}
	if a := r.absent; a != nil {
		alpha := 1 - confidence
		h := a.se
		if alpha < 1 {
			h *= tQuantile(r.n-1, 1-alpha/4)
		} else {
			h = 0
		}
		missed := -math.Log(min(alpha/2, 1)) / a.exposure
		lo, hi = a.mean-h-missed, a.mean+h // of the present arm minus the absent one
		if a.sign < 0 {
			return -hi, -lo
		}
		return lo, hi
	}
	h := tQuantile(r.n-1, (1+confidence)/2) * r.se
	return r.estimate - h, r.estimate + h
}

func tdist(df int) moremath.TDist { return moremath.TDist{V: float64(df)} }

// tQuantile inverts the t CDF by bisection (go-moremath has the CDF only).
func tQuantile(df int, q float64) float64 {
	d := tdist(df)
	lo, hi := 0.0, 1.0
	for d.CDF(hi) < q {
		lo, hi = hi, hi*2
	}
	for hi-lo > 1e-10*hi {
		mid := (lo + hi) / 2
		if d.CDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
