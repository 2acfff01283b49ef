package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Check refuses a sample a ratio cannot be taken of: empty, or holding a
// value that is NaN, infinite, zero or negative. The error names the arm
// and the run (1-based), so a notebook can find it.
func Check(arm string, xs []float64) error {
	if len(xs) == 0 {
		return fmt.Errorf("%s has no runs", arm)
	}
	for i, x := range xs {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("%s run %d is %g: a measurement must be a finite number", arm, i+1, x)
		case x <= 0:
			return fmt.Errorf("%s run %d is %g: a ratio (the index, its interval) needs values above 0", arm, i+1, x)
		}
	}
	return nil
}

// CheckFinite refuses an empty sample or one holding NaN or an infinity:
// what every statistic here needs, ratios or not.
func CheckFinite(what string, xs []float64) error {
	if len(xs) == 0 {
		return fmt.Errorf("%s is empty", what)
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s[%d] is %g: want a finite number", what, i, x)
		}
	}
	return nil
}

// Mean is the arithmetic mean; NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// GeoMean is the geometric mean of positive values: the exponential of
// the mean of their logarithms.
func GeoMean(xs []float64) float64 { return math.Exp(Mean(logs(xs))) }

// Median is the middle value (the mean of the two middle ones for an even
// count); NaN for no values.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// SpreadPct is (max - min) / mean in percent: how far apart runs of the
// same arm landed; NaN below 2 values.
func SpreadPct(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	if m == 0 {
		return math.NaN()
	}
	return (slices.Max(xs) - slices.Min(xs)) / math.Abs(m) * 100
}

// bootstrapSeed makes every CI deterministic: the same samples always give
// the same interval.
const bootstrapSeed = 20261129

// BootstrapRatioCI returns the percentile bootstrap interval, at the given
// confidence, of mean(b)/mean(a). When the samples are paired (same length)
// pairs are resampled together, which keeps the drift shared by a pair out of
// the interval; otherwise each sample is resampled on its own.
func BootstrapRatioCI(a, b []float64, confidence float64, reps int) (lo, hi float64) {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(a))<<32|uint64(len(b))))
	paired := len(a) == len(b)
	ratios := make([]float64, 0, reps)
	for range reps {
		var sa, sb float64
		if paired {
			for range a {
				i := rng.IntN(len(a))
				sa += a[i]
				sb += b[i]
			}
		} else {
			for range a {
				sa += a[rng.IntN(len(a))]
			}
			for range b {
				sb += b[rng.IntN(len(b))]
			}
		}
		ratio := (sb / float64(len(b))) / (sa / float64(len(a)))
		if !math.IsNaN(ratio) && !math.IsInf(ratio, 0) {
			ratios = append(ratios, ratio)
		}
	}
	if len(ratios) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(ratios)
	alpha := (1 - confidence) / 2
	return quantileSorted(ratios, alpha), quantileSorted(ratios, 1-alpha)
}

// quantileSorted interpolates linearly between order statistics.
func quantileSorted(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	frac := pos - float64(i)
	return s[i]*(1-frac) + s[i+1]*frac
}

// ChanceAllAbove is the probability, when both arms come from the same
// distribution, that every one of nb values lands above every one of na:
// one arrangement of the ranks out of C(na+nb, nb).
func ChanceAllAbove(na, nb int) float64 {
	return 1 / binomial(na+nb, nb)
}

func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// MedianCI returns the sample median and a distribution-free interval for
// it from order statistics, at (at least) the given confidence. The orders
// are chosen as golang.org/x/perf/benchmath does (greedy binomial mass for
// small n, a normal approximation above 30), so a record's intervals agree
// with benchstat's. A side without enough samples is infinite.
func MedianCI(xs []float64, confidence float64) (med, lo, hi float64) {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	l, r := medianOrders(n, confidence)
	med = Median(s)
	lo, hi = math.Inf(-1), math.Inf(1)
	if l >= 1 {
		lo = s[l-1]
	}
	if r-1 < n {
		hi = s[r-1]
	}
	return med, lo, hi
}

// medianOrders returns 1-based orders [l, r] of the interval. l < 1 or
// r > n means unbounded on that side.
func medianOrders(n int, confidence float64) (l, r int) {
	if n > 30 {
		return medianOrdersNormal(n, confidence)
	}
	pmf := func(k int) float64 { return binomPMF(n, k, 0.5) }
	x := int(math.Ceil(float64(n+1)*0.5) - 1)
	accum := pmf(x)
	l, r = x, x+1
	lp, rp := pmf(l-1), pmf(r)
	for accum < confidence && (lp > 0 || rp > 0) {
		if lp >= rp {
			accum += lp
			l--
			lp = pmf(l - 1)
		} else {
			accum += rp
			r++
			rp = pmf(r)
		}
	}
	return l, r
}

func medianOrdersNormal(n int, confidence float64) (l, r int) {
	mu, sigma := float64(n)*0.5, math.Sqrt(float64(n)*0.25)
	alpha := (1 - confidence) / 2
	l1 := mu + sigma*math.Sqrt2*math.Erfinv(2*alpha-1)
	r1 := 2*mu - l1
	l = int(math.Floor(math.Floor(l1-0.5)+0.5)) + 1
	r = int(math.Floor(math.Ceil(r1-0.5)+0.5)) + 1
	cdf := func(l, r int) float64 {
		return normCDF((float64(r)-0.5-mu)/sigma) - normCDF((float64(l)-0.5-mu)/sigma)
	}
	if biased := cdf(l, r-1); biased >= confidence && biased < cdf(l, r) {
		r--
	}
	return l, r
}

func binomPMF(n, k int, p float64) float64 {
	if k < 0 || k > n {
		return 0
	}
	return binomial(n, k) * math.Pow(p, float64(k)) * math.Pow(1-p, float64(n-k))
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
