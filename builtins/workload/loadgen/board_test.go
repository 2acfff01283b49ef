package loadgen

import (
	"strings"
	"testing"
)

// TestBoardOneLinePerScenario: elsewhere than a terminal every line goes
// out with its scenario's name; on a terminal the block of lines is
// redrawn in place, one line per scenario, and cleared at the end.
func TestBoardOneLinePerScenario(t *testing.T) {
	var plain strings.Builder
	b := NewBoard(&plain, false, []string{"reads", "w"})
	b.Slot(0).Write([]byte("1.0s/3s  100 req/s\n"))
	w := b.Slot(1)
	w.Write([]byte("1.0s/3s  "))
	w.Write([]byte("20 req/s\n"))
	if want := "reads │ 1.0s/3s  100 req/s\nw     │ 1.0s/3s  20 req/s\n"; plain.String() != want {
		t.Errorf("plain board:\n%q\nwant\n%q", plain.String(), want)
	}
	var term strings.Builder
	b = NewBoard(&term, true, []string{"a", "b"})
	b.Slot(0).Write([]byte("x\n"))
	b.Slot(1).Write([]byte("y\n"))
	b.Close()
	want := "\r\033[Ka │ x\n\033[Kb │ " + // first draw: b's line still empty
		"\r\033[1A\033[Ka │ x\n\033[Kb │ y" + // redrawn in place
		"\r\033[1A\033[J"
	if term.String() != want {
		t.Errorf("terminal board:\n%q\nwant\n%q", term.String(), want)
	}
}
