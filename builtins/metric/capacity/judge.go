package capacity

import (
	"math"
	"slices"
	"sync"
)

// judge is the sequential sign test that decides whether a level meets
// the SLO. After each run at the level, with k of its n runs meeting every
// limit, the level is judged passing when k >= need[n] and failing when
// n - k >= need[n]. A level meets the SLO when its runs meet it more often
// than not (its median run does); the boundaries are set so that a level
// whose runs meet it exactly half the time is judged passing, over every
// look up to max runs, with probability at most alpha (computed exactly,
// below), and so judged failing with the same probability; a level further
// from the crossing is misjudged less often still. A level not judged by
// max runs (or that can no longer be) is unsure.
type judge struct {
	need     []int   // need[n]: runs one way out of n that decide; > n: none can
	max      int     // runs at most
	alpha    float64 // the bound asked for
	achieved float64 // the exact chance of a wrong judgement at a level of even odds
}

// judges are the judges made so far, by alpha and max runs: a search
// makes one each time it starts, and a simulation runs thousands.
var judges sync.Map

type judgeKey struct {
	alpha float64
	max   int
}

// newJudge makes the boundaries for alpha and max runs: the most lenient
// of the per-look tail thresholds whose exact overall error stays at most
// alpha.
func newJudge(alpha float64, max int) judge {
	if j, ok := judges.Load(judgeKey{alpha, max}); ok {
		return j.(judge)
	}
	j := makeJudge(alpha, max)
	judges.Store(judgeKey{alpha, max}, j)
	return j
}

func makeJudge(alpha float64, max int) judge {
	var taus []float64
	for n := 1; n <= max; n++ {
		for k := 0; k <= n; k++ {
			taus = append(taus, upperTail(n, k))
		}
	}
	slices.Sort(taus)
	taus = slices.Compact(taus)
	best := judge{need: needs(max, 0), max: max, alpha: alpha}
	for i := len(taus) - 1; i >= 0; i-- {
		need := needs(max, taus[i])
		if p := passChance(need, max); p <= alpha {
			return judge{need: need, max: max, alpha: alpha, achieved: p}
		}
	}
	return best
}

// needs are the boundaries of threshold tau: at each n the fewest runs one
// way whose chance under even odds is at most tau.
func needs(max int, tau float64) []int {
	need := make([]int, max+1)
	for n := 0; n <= max; n++ {
		need[n] = n + 1
		for k := 1; k <= n; k++ {
			if upperTail(n, k) <= tau {
				need[n] = k
				break
			}
		}
	}
	return need
}

// passChance is the chance that a level whose runs meet the SLO half the
// time is ever judged passing: a walk over (n, k) that stops at either
// boundary.
func passChance(need []int, max int) float64 {
	p := []float64{1} // p[k]: the chance of k passes after n runs, undecided
	hit := 0.0
	for n := 1; n <= max; n++ {
		next := make([]float64, n+1)
		for k, x := range p {
			next[k] += x / 2
			next[k+1] += x / 2
		}
		for k := range next {
			switch {
			case k >= need[n]:
				hit += next[k]
				next[k] = 0
			case n-k >= need[n]:
				next[k] = 0
			}
		}
		p = next
	}
	return hit
}

// upperTail is P(X >= k) for X ~ Binomial(n, 1/2).
func upperTail(n, k int) float64 {
	if k <= 0 {
		return 1
	}
	s := 0.0
	for i := k; i <= n; i++ {
		s += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
	}
	return s
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// verdict judges k passes of n runs: "pass", "fail", or "" while more
// runs could still decide, "unsure" when none can.
func (j judge) verdict(n, k int) string {
	switch {
	case n > 0 && n <= j.max && k >= j.need[n]:
		return "pass"
	case n > 0 && n <= j.max && n-k >= j.need[n]:
		return "fail"
	case n >= j.max || !j.reachable(n, k):
		return "unsure"
	}
	return ""
}

// reachable says whether some outcome of the runs left could decide.
func (j judge) reachable(n, k int) bool {
	for m := n + 1; m <= j.max; m++ {
		more := m - n
		if k+more >= j.need[m] || (n-k)+more >= j.need[m] {
			return true
		}
	}
	return false
}

// fewest is the fewest runs that can judge a level.
func (j judge) fewest() int {
	for n := 1; n <= j.max; n++ {
		if j.need[n] <= n {
			return n
		}
	}
	return j.max + 1
}
