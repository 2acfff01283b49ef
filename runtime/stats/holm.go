package stats

import (
	"math"
	"slices"
)

// Holm adjusts p-values for multiplicity by Holm's step-down method: with
// the p sorted from smallest, the i-th (0-based) of m is multiplied by
// m - i, each adjusted p is at least the one before it, and none above 1.
// Calling a result when its adjusted p <= alpha keeps the chance of any
// false call among the m at most alpha, whatever their dependence (a
// notebook's metrics come from the same runs). NaN stays NaN and counts
// in m.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := ps[a], ps[b]
		switch {
		case math.IsNaN(pa) && math.IsNaN(pb):
			return 0
		case math.IsNaN(pa):
			return 1
		case math.IsNaN(pb):
			return -1
		}
		return cmpFloat(pa, pb)
	})
	out := make([]float64, m)
	running := 0.0
	for rank, i := range idx {
		if math.IsNaN(ps[i]) {
			out[i] = math.NaN()
			continue
		}
		running = math.Max(running, math.Min(1, float64(m-rank)*ps[i]))
		out[i] = running
	}
	return out
}
