package metric

import "testing"

func TestBar(t *testing.T) {
	cases := map[float64]int{100: 16, 61: 10, 0: 0, 3146: barMax}
	for index, blocks := range cases {
		b := []rune(Bar(index))
		got := 0
		for _, r := range b {
			if r == '█' {
				got++
			}
		}
		if got != blocks {
			t.Errorf("Bar(%g) has %d blocks, want %d: %q", index, got, blocks, string(b))
		}
	}
}
