package golden

import "testing"

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct{ got, want, diff string }{
		{"a\nb\nc", "a\nx\nc", "line 2:\n got: b\nwant: x"},
		{"a\nb", "a\nb\nc", "line 3:\n got: \nwant: c"},
	} {
		if d := firstDiff(c.got, c.want); d != c.diff {
			t.Errorf("firstDiff(%q, %q) = %q, want %q", c.got, c.want, d, c.diff)
		}
	}
}
