package main

import (
	"math"
	"slices"
	"testing"
)

// worstWait simulates n closed-loop users with zero think time on c FIFO
// workers that each take m per request, and returns the longest response
// time once the queue has settled: an oracle for study.truth's upper end
// that shares none of its arithmetic.
func worstWait(n, c int, m float64) float64 {
	free := make([]float64, c)  // when each worker is next free
	ready := make([]float64, n) // when each user sends again
	queue := make([]int, n)
	for i := range queue {
		queue[i] = i
	}
	worst := 0.0
	for step := 0; step < 50*n; step++ {
		u := queue[0]
		queue = queue[1:]
		w := slices.Index(free, slices.Min(free))
		start := max(free[w], ready[u])
		done := start + m
		free[w] = done
		if step >= 10*n { // past the start, where all sent at once
			worst = max(worst, done-ready[u])
		}
		ready[u] = done
		// users queue in the order their requests come back
		i, _ := slices.BinarySearchFunc(queue, done, func(v int, t float64) int {
			if ready[v] <= t {
				return -1
			}
			return 1
		})
		queue = slices.Insert(queue, i, u)
	}
	return worst
}

func TestZeroThinkTruthAgainstTheQueue(t *testing.T) {
	st := studies()[0]
	for _, m := range []float64{9.7, 10, 10.4, 10.824, 11.5, 12.585, 16.7} {
		_, hi := st.truth(m, math.NaN())
		for n := 1; n <= 2*int(hi)+2; n++ {
			ok := worstWait(n, st.Workers, m) <= st.Limit+1e-9
			if ok != (float64(n) <= hi) {
				t.Errorf("service %.3f ms, %d users: the queue's worst wait %.3f ms, within %g: %v; truth's upper end %g", m, n, worstWait(n, st.Workers, m), st.Limit, ok, hi)
			}
		}
	}
	// A spread of services leaves the upper end and can only lower the
	// lower one: at no spread the range is the upper end alone, and at a
	// spread of half the service the p99 of 4 services (m·4 + 2.33·2·sd
	// = 41.6 + 24.2 ms) is past the limit where their mean is not.
	_, top := st.truth(10.4, math.NaN())
	prev := top
	for _, sd := range []float64{0, 0.5, 1.5, 3, 5.2} {
		lo, hi := st.truth(10.4, sd)
		if hi != top || lo > prev || (sd == 0 && lo != hi) {
			t.Errorf("truth(10.4, sd %g) = %g to %g; upper end without sd %g, lower end at the last sd %g", sd, lo, hi, top, prev)
		}
		prev = lo
	}
	if lo, hi := st.truth(10.4, 5.2); lo >= hi {
		t.Errorf("truth(10.4, sd 5.2) = %g to %g: a spread of half the service left the lower end at the upper", lo, hi)
	}
}
