package stats

import (
	"fmt"
	"math"

	moremath "github.com/aclements/go-moremath/stats"
)

// MinUnpaired is the fewest runs each arm needs for an interval when the
// arms are not paired (different numbers of runs), and MaxUnpairedRatio how
// many times more runs one arm may have than the other. Beyond either,
// Welch's interval covers the ratio less often than it claims (91 % for a
// 95 % interval at 2 runs against 8, 92.4 % at 4 against 16, in
// simulation), so none is given.
const (
	MinUnpaired      = 3
	MaxUnpairedRatio = 2
)

// Interval bounds the ratio B/A of the arms' geometric means at a
// confidence, or says why there is none.
type Interval struct {
	Low, High float64 // NaN when there is no interval
	// Method names how the interval was made, in words for the record:
	// "paired t on the logs of 4 pair ratios, 3 df".
	Method string
	// None says why there is no interval; "" when there is one.
	None string
}

// Ok reports whether there is an interval.
func (iv Interval) Ok() bool { return iv.None == "" }

// Excludes reports whether x lies outside a closed interval. With no
// interval nothing is excluded.
func (iv Interval) Excludes(x float64) bool {
	return iv.Ok() && (x < iv.Low || x > iv.High)
}

func noInterval(why string) Interval {
	return Interval{Low: math.NaN(), High: math.NaN(), None: why}
}

// RatioCI is the interval the record prints as "95 % CI of the ratio",
// around the same estimate as the index: the ratio of the geometric means,
// GM(B) / GM(A).
//
// Paired arms (as many B runs as A runs, run i of each forming pair i) get
// a Student t-interval on the logarithms of the pair ratios B_i / A_i: the
// two runs of a pair share the drift of the box, so the ratio within a pair
// is the measurement, and logs make a 2× and a 0.5× pair symmetric. The
// mean of those logs is the log of GM(B)/GM(A), so the estimate is the
// interval's centre (in logs) and always inside it.
//
// Unpaired arms get Welch's interval on the difference of the mean logs,
// within MinUnpaired and MaxUnpairedRatio. Values must be positive and
// finite (Check). Coverage is checked by simulation in the tests.
func RatioCI(a, b []float64, confidence float64) Interval {
	if len(a) != len(b) {
		return welchLogCI(a, b, confidence)
	}
	n := len(a)
	if n < 2 {
		return noInterval("one pair: no spread to make an interval from")
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = math.Log(b[i]) - math.Log(a[i])
	}
	m := Mean(d)
	half := tQuantile(float64(n-1), (1+confidence)/2) * stddev(d) / math.Sqrt(float64(n))
	return Interval{Low: math.Exp(m - half), High: math.Exp(m + half),
		Method: fmt.Sprintf("paired t on the logs of %d pair ratios, %d df", n, n-1)}
}

func welchLogCI(a, b []float64, confidence float64) Interval {
	small, large := min(len(a), len(b)), max(len(a), len(b))
	if small < MinUnpaired || large > MaxUnpairedRatio*small {
		return noInterval(fmt.Sprintf("%d and %d runs, not paired: an interval needs pairs, or at least %d runs in each arm and at most %d times as many in one as in the other",
			len(a), len(b), MinUnpaired, MaxUnpairedRatio))
	}
	la, lb := logs(a), logs(b)
	va, vb := variance(la)/float64(len(a)), variance(lb)/float64(len(b))
	m := Mean(lb) - Mean(la)
	method := fmt.Sprintf("Welch t on the logs of %d and %d runs", len(a), len(b))
	se := math.Sqrt(va + vb)
	if se == 0 {
		return Interval{Low: math.Exp(m), High: math.Exp(m), Method: method + ", no spread"}
	}
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	half := tQuantile(df, (1+confidence)/2) * se
	return Interval{Low: math.Exp(m - half), High: math.Exp(m + half),
		Method: fmt.Sprintf("%s, %.1f df", method, df)}
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// variance is the sample variance (n - 1 in the denominator).
func variance(xs []float64) float64 {
	m := Mean(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

func stddev(xs []float64) float64 { return math.Sqrt(variance(xs)) }

// tQuantile is the q-quantile (q > 0.5) of Student's t with df degrees of
// freedom, by bisection on go-moremath's CDF (which benchstat relies on).
func tQuantile(df, q float64) float64 {
	dist := moremath.TDist{V: df}
	lo, hi := 0.0, 1.0
	for dist.CDF(hi) < q {
		lo, hi = hi, hi*2
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if dist.CDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
