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
