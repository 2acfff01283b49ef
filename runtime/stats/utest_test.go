package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// enumeratedP is the oracle for the exact test: it splits the pooled
// values into a and b in every possible way, computes U by comparing every
// pair of values (no ranks, no tie groups), and doubles the smaller tail.
func enumeratedP(a, b []float64) float64 {
	pool := append(append([]float64(nil), a...), b...)
	n, n1 := len(pool), len(a)
	u2 := func(x, y []float64) int { // twice U of x against y
		s := 0
		for _, xi := range x {
			for _, yi := range y {
				switch {
				case xi > yi:
					s += 2
				case xi == yi:
					s++
				}
			}
		}
		return s
	}
	observed := u2(a, b)
	var total, le, ge int
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		var x, y []float64
		for i, v := range pool {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		u := u2(x, y)
		total++
		if u <= observed {
			le++
		}
		if u >= observed {
			ge++
		}
	}
	return math.Min(1, 2*float64(min(le, ge))/float64(total))
}

// TestMannWhitneyEnumeration checks the exact p against enumeration for
// every pair of sizes up to 7 vs 7, with random ties (values drawn from a
// few levels), and checks that swapping a and b gives the same p.
func TestMannWhitneyEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	checked := 0
	for n1 := 1; n1 <= 7; n1++ {
		for n2 := 1; n2 <= 7; n2++ {
			for trial := range 12 {
				levels := 2 + trial%6 // 2 levels: heavy ties; 7: few
				draw := func(n int, shift int) []float64 {
					xs := make([]float64, n)
					for i := range xs {
						xs[i] = float64(rng.IntN(levels) + rng.IntN(2)*shift)
					}
					return xs
				}
				a, b := draw(n1, 0), draw(n2, trial%3)
				want := enumeratedP(a, b)
				got := MannWhitney(a, b)
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("a=%v b=%v: p = %.12g, enumeration %.12g", a, b, got, want)
				}
				if swapped := MannWhitney(b, a); math.Abs(swapped-got) > 1e-9 {
					t.Errorf("a=%v b=%v: p = %.12g, swapped %.12g", a, b, got, swapped)
				}
				checked++
			}
		}
	}
	t.Logf("%d samples checked against enumeration", checked)
}

// TestMannWhitneyKnownTies are the cases from issue 13, exact two-sided
// (twice the smaller tail) by hand: [1,1] vs [0,0,0] puts both of a in the
// top tie group, 1 split of 10.
func TestMannWhitneyKnownTies(t *testing.T) {
	cases := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 1}, []float64{0, 0, 0}, 0.2},
		{[]float64{120, 120, 121}, []float64{100, 100, 100, 100, 120}, 0.107},
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 2.0 / 70},
		{[]float64{5, 5, 5}, []float64{5, 5}, 1},
	}
	for _, c := range cases {
		for _, swap := range []bool{false, true} {
			a, b := c.a, c.b
			if swap {
				a, b = b, a
			}
			got := MannWhitney(a, b)
			if math.Abs(got-c.want) > 5e-4 {
				t.Errorf("a=%v b=%v: p = %.4g, want %.4g", a, b, got, c.want)
			}
		}
	}
}

// TestMannWhitneyNormalRegime checks the approximation above the exact
// limit against the exact count just at it: a sample of 30 + 30 with ties
// is counted exactly, and the approximation must land near it.
func TestMannWhitneyNormalRegime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 20 {
		a, b := make([]float64, 30), make([]float64, 30)
		for i := range a {
			a[i] = math.Round(rng.NormFloat64() * 3)
			b[i] = math.Round(rng.NormFloat64()*3 + float64(trial%4)/2)
		}
		exact := exactUTest(tieGroups(a, b), len(a))
		approx := normalUTest(tieGroups(a, b), len(a), len(b))
		if math.Abs(exact-approx) > 0.02 {
			t.Errorf("trial %d: exact %.4f, normal %.4f", trial, exact, approx)
		}
	}
}

func TestMinP(t *testing.T) {
	for n := 1; n <= 6; n++ {
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = float64(i), float64(n+i)
		}
		if got, want := MannWhitney(a, b), MinP(n, n); math.Abs(got-want) > 1e-12 {
			t.Errorf("%d pairs: the most extreme split gives p = %g, minP %g", n, got, want)
		}
	}
}
