package metric

import (
	"testing"

	"go.starlark.net/starlark"
)

// TestIndexKeepsSmallValues: an index of 0.8 (B is 125 times cheaper) must
// not show as 1 in a table built from c.index.
func TestIndexKeepsSmallValues(t *testing.T) {
	cases := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1000, 1000}, []float64{8, 8}, 0.8},
		{[]float64{1000, 1000}, []float64{74, 74}, 7.4},
		{[]float64{700, 700}, []float64{850, 850}, 121},
		{[]float64{100, 100}, []float64{0.0123, 0.0123}, 0.012},
	}
	for _, c := range cases {
		cmp, err := newComparison(compareInput{metric: "m", better: "lower", aLabel: "A", bLabel: "B", a: c.a, b: c.b})
		if err != nil {
			t.Fatal(err)
		}
		v, err := cmp.Attr("index")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := starlark.AsFloat(v); got != c.want {
			t.Errorf("index of %v over %v is %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
