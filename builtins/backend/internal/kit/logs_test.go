package kit

import (
	"bytes"
	"strings"
	"testing"
)

// TestLogRingCutsLongLines: long lines are cut and marked, short ones kept
// whole, and the count of lines stays at the ring's size.
func TestLogRingCutsLongLines(t *testing.T) {
	r := NewLogRing(3)
	big := bytes.Repeat([]byte("x"), 3*MaxLogLine)
	r.Write(big)
	r.Write(big)
	r.Write([]byte("\nshort\none\ntwo\n"))
	got := r.Tail(0)
	if len(got) != 3 || got[0] != "short" || got[2] != "two" {
		t.Fatalf("tail = %.200q", got)
	}
	r = NewLogRing(3)
	r.Write(append(big, '\n'))
	if l := r.Tail(0)[0]; len(l) > MaxLogLine+64 || !strings.Contains(l, "line cut at") {
		t.Fatalf("a long line kept %d bytes: %.100q", len(l), l)
	}
}
