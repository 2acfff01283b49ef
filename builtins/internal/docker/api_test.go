package docker

import "testing"

// TestOlderAPI: versions compare by number, not as strings (1.9 < 1.10).
func TestOlderAPI(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		older bool
	}{
		{"1.41", "1.57", true}, {"1.57", "1.41", false}, {"1.41", "1.41", false},
		{"1.9", "1.10", true}, {"1.10", "1.9", false}, {"1.99", "2.0", true}, {"2.0", "1.99", false},
	} {
		if got := olderAPI(c.a, c.b); got != c.older {
			t.Errorf("olderAPI(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
