package stats

import (
	"math"
	"slices"
	"sync"
)

// exactLimit is the largest pooled sample for which mannWhitney counts the
// permutation distribution exactly; the count costs about N³·min(n1,n2)/2
// additions, 3 ms at 60.
const exactLimit = 60

// MannWhitney returns the two-sided p-value of the Mann-Whitney U test of a
// against b (null hypothesis: both come from the same distribution).
//
// Up to exactLimit values in all, p is exact: the distribution of U over
// every way of splitting the pooled values into groups of len(a) and len(b),
// which keeps the pattern of ties as observed (the permutation distribution
// conditional on the ties). Above, the normal approximation with tie and
// continuity corrections.
//
// Two-sided convention: twice the smaller tail, P = min(1, 2·min(P(U ≤ u),
// P(U ≥ u))). With ties the distribution need not be symmetric, so this is
// not the same as P(|U - mean| ≥ |u - mean|). p is the same with a and b
// swapped, and 1 when every value is equal; NaN when a value is NaN.
func MannWhitney(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 || slices.ContainsFunc(a, math.IsNaN) || slices.ContainsFunc(b, math.IsNaN) {
		return math.NaN() // NaN equals nothing, so it has no rank
	}
	// Count subsets of the smaller sample: the cost grows with its size,
	// and the tails of the other follow by symmetry (U_b = n1·n2 - U_a).
	if len(b) < len(a) {
		a, b = b, a
	}
	groups := tieGroups(a, b)
	if len(a)+len(b) <= exactLimit {
		return exactUTest(groups, len(a))
	}
	return normalUTest(groups, len(a), len(b))
}

// tieGroup is a run of equal values in the pooled sample: how many there
// are, how many of them came from a, and twice their midrank (so that
// ranks stay integers).
type tieGroup struct {
	size, fromA, rank2 int
}

// tieGroups sorts the pooled values into groups of equal values, in
// increasing order.
func tieGroups(a, b []float64) []tieGroup {
	type item struct {
		v     float64
		fromA bool
	}
	all := make([]item, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, item{v, true})
	}
	for _, v := range b {
		all = append(all, item{v, false})
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
	var groups []tieGroup
	for i := 0; i < len(all); {
		j, fromA := i, 0
		for j < len(all) && all[j].v == all[i].v {
			if all[j].fromA {
				fromA++
			}
			j++
		}
		// ranks i+1 .. j, midrank (i+1+j)/2, doubled
		groups = append(groups, tieGroup{size: j - i, fromA: fromA, rank2: i + 1 + j})
		i = j
	}
	return groups
}

// exactUTest counts, by dynamic programming over the tie groups, the ways
// to pick n1 of the pooled values for a: taking k of a group of t adds
// k·rank to a's rank sum and multiplies the ways by C(t, k). It returns
// twice the smaller tail of a's rank sum at the observed one.
func exactUTest(groups []tieGroup, n1 int) float64 {
	observed := 0
	for _, g := range groups {
		observed += g.fromA * g.rank2
	}
	return twoSided(rankSumWays(groups, n1), observed)
}

// twoSided is the two-sided p of an exact test whose statistic takes the
// value s in ways[s] of its equally likely arrangements: twice the smaller
// tail at the observed value, at most 1.
func twoSided(ways []float64, observed int) float64 {
	var total, le, ge float64
	for s, w := range ways {
		total += w
		if s <= observed {
			le += w
		}
		if s >= observed {
			ge += w
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/total)
}

// rankSumWays is the number of ways, for each doubled rank sum s, to pick
// n1 of the pooled values. Without ties it depends only on the sizes, so
// it is counted once per pair of sizes and kept.
func rankSumWays(groups []tieGroup, n1 int) []float64 {
	noTies := true
	for _, g := range groups {
		noTies = noTies && g.size == 1
	}
	key := [2]int{n1, len(groups)}
	if noTies {
		if w, ok := noTieWays.Load(key); ok {
			return w.([]float64)
		}
	}
	maxSum := 0
	for _, g := range groups {
		maxSum += g.size * g.rank2
	}
	// ways[k][s]: ways to pick k values so far with doubled rank sum s.
	// float64 holds C(60, 30) ≈ 1.2e17 exactly enough: every count is a
	// sum of positive terms, so the relative error stays near 1e-15.
	ways, next := grid(n1+1, maxSum+1), grid(n1+1, maxSum+1)
	ways[0][0] = 1
	reach := 0
	for _, g := range groups {
		addGroup(next, ways, g, reach)
		ways, next = next, ways
		reach += g.size * g.rank2
	}
	if noTies {
		noTieWays.Store(key, ways[n1])
	}
	return ways[n1]
}

// noTieWays caches rankSumWays without ties by (n1, n1 + n2): a read-only
// slice once stored, so sharing it is safe.
var noTieWays sync.Map

func grid(rows, cols int) [][]float64 {
	g := make([][]float64, rows)
	for i := range g {
		g[i] = make([]float64, cols)
	}
	return g
}

// addGroup writes into next the counts of ways extended by one tie group.
// Sums above reach (the largest so far) have no ways yet and are skipped.
func addGroup(next, ways [][]float64, g tieGroup, reach int) {
	for _, row := range next {
		clear(row[:min(len(row), reach+g.size*g.rank2+1)])
	}
	for k := range ways {
		for take := 0; take <= g.size && k+take < len(ways); take++ {
			c, shift := binomial(g.size, take), take*g.rank2
			src, dst := ways[k], next[k+take]
			for s := 0; s <= reach && s+shift < len(dst); s++ {
				if src[s] != 0 {
					dst[s+shift] += c * src[s]
				}
			}
		}
	}
}

// normalUTest is the normal approximation with the tie correction of the
// variance and a continuity correction, two-sided.
func normalUTest(groups []tieGroup, n1, n2 int) float64 {
	var t, r2 float64
	for _, g := range groups {
		k := float64(g.size)
		t += k*k*k - k
		r2 += float64(g.fromA * g.rank2)
	}
	n := float64(n1 + n2)
	u1 := r2/2 - float64(n1*(n1+1))/2
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) * ((n + 1) - t/(n*(n-1))) / 12)
	if sigma == 0 {
		return 1
	}
	d := math.Abs(u1-mu) - 0.5
	if d <= 0 {
		return 1
	}
	return math.Min(1, 2*(1-normCDF(d/sigma)))
}

// MinP is the smallest two-sided p the exact test can give for samples of
// na and nb values: every value of one above every value of the other, no
// ties, 2 / C(na+nb, na).
func MinP(na, nb int) float64 {
	return math.Min(1, 2/binomial(na+nb, na))
}
