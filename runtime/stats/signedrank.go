package stats

import (
	"math"
	"slices"
	"sync"
)

// exactSignedLimit is the most nonzero differences for which SignedRank
// counts the sign-flip distribution exactly (n·n(n+1) additions: 1 M at
// 100); above, the normal approximation with the tie correction.
const exactSignedLimit = 100

// SignedRank returns the two-sided p of the Wilcoxon signed-rank test of
// the differences d (null hypothesis: d is symmetric about 0, as the log
// ratios of pairs are when the arms do not differ, whatever drift the two
// runs of a pair share).
//
// Zeros (pairs that measured the same) are ranked with the others and
// carry no sign (Pratt's method); equal |d| share their midrank. Up to
// exactSignedLimit nonzero differences p is exact: of the 2^n equally
// likely sign patterns, the share whose signed-rank sum is as far out as
// the observed one, with the ranks as observed (the permutation
// distribution conditional on ties and zeros). Two-sided: twice the
// smaller tail, at most 1. With n nonzero differences p is at least
// 2 / 2^n, so 6 pairs are the fewest that can reach 0.05.
func SignedRank(d []float64) float64 {
	r2, pos := signedRanks(d)
	if len(r2) == 0 {
		return 1
	}
	t := 0
	for i, r := range r2 {
		if pos[i] {
			t += r
		}
	}
	if len(r2) > exactSignedLimit {
		return normalSignedRank(r2, t)
	}
	return twoSided(signFlipWays(r2), t)
}

// signedRanks ranks |d| (zeros included, ties at their midrank), and
// returns twice the rank of each nonzero difference with its sign.
func signedRanks(d []float64) (r2 []int, positive []bool) {
	idx := make([]int, len(d))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int { return cmpFloat(math.Abs(d[x]), math.Abs(d[y])) })
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && math.Abs(d[idx[j]]) == math.Abs(d[idx[i]]) {
			j++
		}
		for _, k := range idx[i:j] {
			if d[k] != 0 {
				r2 = append(r2, i+1+j) // ranks i+1 .. j: midrank (i+1+j)/2, doubled
				positive = append(positive, d[k] > 0)
			}
		}
		i = j
	}
	return r2, positive
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// signFlipWays counts, for each doubled rank sum s, the sign patterns
// whose positive ranks sum to s. Without ties it depends only on n and is
// kept.
func signFlipWays(r2 []int) []float64 {
	n := len(r2)
	noTies := true
	for i, r := range r2 {
		noTies = noTies && r == 2*(i+1)
	}
	if noTies {
		if w, ok := noTieSignWays.Load(n); ok {
			return w.([]float64)
		}
	}
	total := 0
	for _, r := range r2 {
		total += r
	}
	ways := make([]float64, total+1)
	ways[0] = 1
	reach := 0
	for _, r := range r2 {
		reach += r
		for s := reach; s >= r; s-- {
			ways[s] += ways[s-r]
		}
	}
	if noTies {
		noTieSignWays.Store(n, ways)
	}
	return ways
}

// noTieSignWays caches signFlipWays for ranks 1..n by n; read-only once
// stored.
var noTieSignWays sync.Map

// normalSignedRank is the normal approximation to SignedRank's p, with the
// variance from the ranks as they are (the tie correction) and a
// continuity correction of half a rank.
func normalSignedRank(r2 []int, t int) float64 {
	var sum, sq float64
	for _, r := range r2 {
		sum += float64(r)
		sq += float64(r) * float64(r)
	}
	mu, sigma := sum/2, math.Sqrt(sq)/2
	if sigma == 0 {
		return 1
	}
	dev := math.Abs(float64(t)-mu) - 1 // doubled ranks: 1 is half a rank
	if dev <= 0 {
		return 1
	}
	return math.Min(1, 2*(1-normCDF(dev/sigma)))
}

// MinPairs is the fewest pairs whose signed-rank test can reach p <= alpha
// (all pairs one way: p = 2 / 2^n).
func MinPairs(alpha float64) int {
	n := 1
	for math.Pow(2, float64(1-n)) > alpha && n < 64 {
		n++
	}
	return n
}

// signedCritical is the largest c with P(T <= c) <= tail for the
// signed-rank sum T of n differences without ties (T in ranks, not
// doubled), and the probability P(T <= c); c is -1 when even T = 0 is more
// likely than tail.
func signedCritical(n int, tail float64) (int, float64) {
	if n > exactSignedLimit {
		nf := float64(n)
		mu, sigma := nf*(nf+1)/4, math.Sqrt(nf*(nf+1)*(2*nf+1)/24)
		c := int(math.Floor(mu - zQuantile(1-tail)*sigma - 0.5))
		return c, tail
	}
	r2 := make([]int, n)
	for i := range r2 {
		r2[i] = 2 * (i + 1)
	}
	ways := signFlipWays(r2)
	total := math.Pow(2, float64(n))
	acc, c := 0.0, -1
	for s := 0; s < len(ways); s += 2 { // doubled sums of whole ranks are even
		if (acc+ways[s])/total > tail {
			break
		}
		acc += ways[s]
		c = s / 2
	}
	return c, acc / total
}

// zQuantile is the q-quantile of the standard normal.
func zQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// walshAverages are the n(n+1)/2 averages (d_i + d_j)/2, i <= j, sorted:
// the signed-rank sum at a shift δ is the number of them above δ.
func walshAverages(d []float64) []float64 {
	w := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	return w
}
