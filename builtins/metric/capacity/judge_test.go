package capacity

import (
	"math"
	"testing"
)

// TestJudgeChanceExact: the chance that a level of even odds is ever judged
// passing, computed by the judge's walk, is the one brute force gives by
// enumerating every sequence of outcomes of max runs (each equally likely)
// and stopping each at its first boundary; and it is at most alpha.
func TestJudgeChanceExact(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		max   int
	}{{0.025, 12}, {0.05, 10}, {0.025, 6}, {0.1, 14}, {0.005, 12}} {
		j := newJudge(c.alpha, c.max)
		pass, fail := 0, 0
		for seq := 0; seq < 1<<c.max; seq++ {
			k := 0
			for n := 1; n <= c.max; n++ {
				if seq>>(n-1)&1 == 1 {
					k++
				}
				v := j.verdict(n, k)
				if v == "pass" {
					pass++
					break
				}
				if v == "fail" {
					fail++
					break
				}
				if v == "unsure" {
					break
				}
			}
		}
		brute := float64(pass) / float64(int(1)<<c.max)
		if math.Abs(brute-j.achieved) > 1e-12 || pass != fail {
			t.Errorf("alpha %g, %d runs: walk %.6f, enumeration %.6f (%d pass, %d fail)", c.alpha, c.max, j.achieved, brute, pass, fail)
		}
		if j.achieved > c.alpha || j.achieved == 0 {
			t.Errorf("alpha %g, %d runs: chance %.6f of a wrong judgement", c.alpha, c.max, j.achieved)
		}
		t.Logf("alpha %g, %d runs: need %v, fewest %d, chance %.4f", c.alpha, c.max, j.need[1:], j.fewest(), j.achieved)
	}
}

// TestJudgeStopsWhenUndecidable: a level whose remaining runs can no longer
// decide is unsure at once, not run to the end.
func TestJudgeStopsWhenUndecidable(t *testing.T) {
	j := newJudge(0.025, 12)
	// 6 one way decide at 6; 5 of 10 leaves 2 runs that cannot reach the
	// 10 of 12 either way needs.
	if v := j.verdict(6, 6); v != "pass" {
		t.Errorf("6 of 6: %q", v)
	}
	if v := j.verdict(6, 0); v != "fail" {
		t.Errorf("0 of 6: %q", v)
	}
	if v := j.verdict(3, 2); v != "" {
		t.Errorf("2 of 3: %q, want more runs", v)
	}
	if v := j.verdict(10, 5); v != "unsure" {
		t.Errorf("5 of 10 with 2 runs left: %q, want unsure", v)
	}
}
