package busybox

import (
	"context"
	"math"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestBoxLoadOverTheWindow: load1 is the load average over the run's
// window, from readings at both ends, as foreign_cpu is: a box whose load
// fell from 12 to 2 during a run was loaded for it, which the end alone
// (2) hid.
func TestBoxLoadOverTheWindow(t *testing.T) {
	defer func(f func() ([3]float64, error)) { loadAvg = f }(loadAvg)
	readings := [][3]float64{{12, 11, 10}, {2, 9, 10}}
	loadAvg = func() ([3]float64, error) {
		l := readings[0]
		readings = readings[1:]
		return l, nil
	}
	stop, err := (&Observer{}).StartObserving(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	figs, err := stop(0)
	if err != nil {
		t.Fatal(err)
	}
	if figs["load1"] != 7 || len(readings) != 0 {
		t.Errorf("load1 = %v from readings 12 at the start and 2 at the end (%d unread), want their mean 7", figs["load1"], len(readings))
	}
	for _, k := range []string{"foreign_cpu", "steal_cpu"} {
		if v, ok := figs[k]; !ok || v < 0 || math.IsNaN(v) {
			t.Errorf("%s = %v, %v", k, v, ok)
		}
	}
}

// host.observe names a PID for its own session only: a second session of
// the same process (a test, an agent) still counts it as foreign.
func TestObservedIsPerSession(t *testing.T) {
	a := startest.Thread(t, startest.Options{})
	b := startest.Thread(t, startest.Options{})
	Observe(a, 4242)
	if got := Observed(a); len(got) != 1 || got[0] != 4242 {
		t.Errorf("session a observed %v, want [4242]", got)
	}
	if got := Observed(b); len(got) != 0 {
		t.Errorf("session b observed %v, want none", got)
	}
}
