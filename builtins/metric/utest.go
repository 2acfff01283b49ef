package metric

import (
	"math"
	"slices"
)

// mannWhitney returns the two-sided p-value of the Mann-Whitney U test of a
// against b (null hypothesis: both come from the same distribution). Small
// samples use the exact permutation distribution of the rank sum, midranks
// included, so ties are exact too; larger ones the normal approximation with
// tie and continuity corrections. The limits follow go-moremath, which
// benchstat uses. p is 1 when every value is equal.
func mannWhitney(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return math.NaN()
	}
	ranks2, ties := midranks2(a, b)
	if len(ties) == 1 {
		return 1
	}
	var r1x2 int // twice the rank sum of a
	for _, r := range ranks2[:n1] {
		r1x2 += r
	}
	u1 := float64(r1x2)/2 - float64(n1*(n1+1))/2
	u2 := float64(n1*n2) - u1
	if u1 == u2 {
		return 1
	}
	hasTies := len(ties) < n1+n2
	limit := 50
	if hasTies {
		limit = 25
	}
	if n1 <= limit && n2 <= limit {
		return exactUTest(ranks2, n1, 2*math.Min(u1, u2)+float64(n1*(n1+1)))
	}
	return normalUTest(n1, n2, u1, ties)
}

// midranks2 ranks the pooled values (a first, then b) and returns twice
// each value's midrank, so ranks stay integers, plus the size of each group
// of equal values.
func midranks2(a, b []float64) (ranks2 []int, ties []int) {
	type item struct {
		v float64
		i int
	}
	all := make([]item, 0, len(a)+len(b))
	for i, v := range slices.Concat(a, b) {
		all = append(all, item{v, i})
	}
	slices.SortFunc(all, func(x, y item) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	ranks2 = make([]int, len(all))
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// ranks i+1 .. j, midrank (i+1+j)/2, doubled
		for k := i; k < j; k++ {
			ranks2[all[k].i] = i + 1 + j
		}
		ties = append(ties, j-i)
		i = j
	}
	return ranks2, ties
}

// exactUTest enumerates, by dynamic programming, how many ways n1 of the
// pooled (doubled) ranks sum to each total, and returns twice the lower
// tail of a's rank sum at the sum that the smaller U corresponds to: the
// two-sided p of go-moremath (with ties the distribution need not be
// symmetric, and this is the convention benchstat reports).
func exactUTest(ranks2 []int, n1 int, small float64) float64 {
	maxSum := 0
	for _, r := range ranks2 {
		maxSum += r
	}
	// ways[k][s]: subsets of size k with doubled rank sum s, as a
	// probability-scaled count (float64 holds C(100, 50) comfortably).
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for _, r := range ranks2 {
		for k := n1; k >= 1; k-- {
			row, prev := ways[k], ways[k-1]
			for s := maxSum; s >= r; s-- {
				row[s] += prev[s-r]
			}
		}
	}
	var total, le float64
	for s, w := range ways[n1] {
		total += w
		if float64(s) <= small {
			le += w
		}
	}
	return math.Min(1, 2*le/total)
}

func normalUTest(n1, n2 int, u1 float64, ties []int) float64 {
	var t float64
	for _, k := range ties {
		t += float64(k*k*k - k)
	}
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) * ((n + 1) - t/(n*(n-1))) / 12)
	if sigma == 0 {
		return 1
	}
	num := u1 - mu
	if num > 0 {
		num -= 0.5
	} else if num < 0 {
		num += 0.5
	}
	z := num / sigma
	return math.Min(1, 2*math.Min(normCDF(z), 1-normCDF(z)))
}
