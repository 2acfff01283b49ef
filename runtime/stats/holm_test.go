package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHolmByHand(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02} // sorted 0.005·4, 0.01·3, 0.03·2, 0.04·1 -> monotone
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("Holm = %v, want %v", got, want)
			break
		}
	}
	if got := Holm([]float64{0.6, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("capped at 1: %v", got)
	}
	if got := Holm(nil); len(got) != 0 {
		t.Errorf("empty: %v", got)
	}
}

// TestHolmFamilyRate (issue 32, case 4): a notebook that compares 10
// metrics of identical arms at 12 pairs called at least one of them in
// 26-29 % of notebooks; with Holm's adjustment it is at most alpha (within
// the simulation's noise), the metrics drawn independent (the worst case
// for Holm) from the shared-drift design.
func TestHolmFamilyRate(t *testing.T) {
	skipUnderRace(t)
	const notebooks, metrics, pairs = 3000, 10, 12
	rng := rand.New(rand.NewPCG(4, 32))
	raw, adjusted := 0, 0
	cd := condition{name: "drift 2 %/pair", drift: 0.02}
	for range notebooks {
		ps := make([]float64, metrics)
		anyRaw := false
		for m := range ps {
			a, b := cd.draw(rng, pairs, pairs, 1)
			c := compareOrFail(t, a, b, "higher")
			ps[m] = c.PValue
			anyRaw = anyRaw || c.Verdict != "~"
		}
		if anyRaw {
			raw++
		}
		for _, p := range Holm(ps) {
			if p <= DefaultAlpha {
				adjusted++
				break
			}
		}
	}
	rawRate, adjRate := float64(raw)/notebooks, float64(adjusted)/notebooks
	t.Logf("notebooks with a false verdict among %d metrics: %.3f unadjusted, %.3f with Holm", metrics, rawRate, adjRate)
	if rawRate < 0.2 {
		t.Errorf("unadjusted family rate %.3f: the simulation no longer shows the problem", rawRate)
	}
	if adjRate > DefaultAlpha+binomialSlack(DefaultAlpha, notebooks) {
		t.Errorf("Holm-adjusted family rate %.3f > alpha %.2f", adjRate, DefaultAlpha)
	}
}
