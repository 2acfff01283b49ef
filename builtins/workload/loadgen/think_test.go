package loadgen

import (
	"math"
	"testing"
	"time"
)

// TestThinkDraws: a user's think times are the mean (constant) or
// exponential with that mean (CV 1), and a constant think's first wait is
// uniform over one think; two users draw differently, one seed the same.
func TestThinkDraws(t *testing.T) {
	e := &engine{spec: Spec{Think: 10 * time.Millisecond, ThinkExp: true}}
	a, b := e.newThinker(), e.newThinker()
	var m Moments
	for range 20000 {
		m.Add(float64(a.draw()))
	}
	if math.Abs(m.Mean/float64(10*time.Millisecond)-1) > 0.03 || math.Abs(m.CV()-1) > 0.03 {
		t.Errorf("exponential draws: mean %v, CV %.3f; want 10ms and 1", time.Duration(m.Mean), m.CV())
	}
	if a.draw() == b.draw() && a.draw() == b.draw() {
		t.Errorf("two users draw the same think times")
	}
	again := (&engine{spec: e.spec}).newThinker()
	first := (&engine{spec: e.spec}).newThinker()
	if again.draw() != first.draw() {
		t.Errorf("one seed, two draws")
	}
	c := (&engine{spec: Spec{Think: 10 * time.Millisecond}}).newThinker()
	var f Moments
	for range 20000 {
		if d := c.draw(); d != 10*time.Millisecond {
			t.Fatalf("constant think drew %v", d)
		}
		f.Add(float64(c.first()))
	}
	// Uniform over [0, 10 ms): mean 5 ms, CV 1/sqrt(3).
	if math.Abs(f.Mean/float64(5*time.Millisecond)-1) > 0.03 || math.Abs(f.CV()-1/math.Sqrt(3)) > 0.03 {
		t.Errorf("first waits: mean %v, CV %.3f; want 5ms and 0.577", time.Duration(f.Mean), f.CV())
	}
}

// TestMomentsMerge: moments merged from parts are those of the whole.
func TestMomentsMerge(t *testing.T) {
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	var whole, a, b Moments
	for i, x := range xs {
		whole.Add(x)
		if i < 4 {
			a.Add(x)
		} else {
			b.Add(x)
		}
	}
	a.Merge(b)
	if a.N != whole.N || math.Abs(a.Mean-whole.Mean) > 1e-12 || math.Abs(a.M2-whole.M2) > 1e-9 {
		t.Errorf("merged %+v, whole %+v", a, whole)
	}
}
