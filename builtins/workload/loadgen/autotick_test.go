package loadgen

import (
	"context"
	"testing"
	"time"
)

// TestAutoTickSchedule enumerates every job of one second of schedules, at
// rates on both sides of the threshold, constant and Poisson, on one and
// on several event loops, and checks what the default tick promises: no
// request leaves before its intended start; at a loop's rate up to 2,500/s
// each leaves exactly at it; above, none leaves 400 µs or more after it and
// the loop wakes at most 2,500 times a second (once per distinct send time).
func TestAutoTickSchedule(t *testing.T) {
	for _, loops := range []int64{1, 3} {
		for _, arrival := range []string{"constant", "poisson"} {
			for _, rate := range []float64{100, 2499, 2500, 2501, 4999, 5000, 7500, 20000, 250000} {
				spec := Spec{Rate: rate, Arrival: arrival, TickAuto: true, Duration: time.Second, MaxInflight: 1000}
				r := newEngine(context.Background(), spec, nil)
				perLoop := rate / float64(openLoops(spec))
				for i := range loops {
					// The engine's own loop count depends on GOMAXPROCS:
					// check its tick against the rate each loop really gets.
					r.tick = AutoTick(rate / float64(loops))
					s := newSchedule(newPacer(arrival, rate, 0), r.start, time.Second, 0, i, loops)
					wakes := map[time.Time]bool{}
					var jobs, maxLate time.Duration
					for {
						j, ok := s.claim()
						if !ok {
							break
						}
						jobs++
						at := r.sendAt(j.Due)
						late := at.Sub(j.Due)
						if late < 0 {
							t.Fatalf("%s %g/s, loop %d of %d: job %d sent %s before its intended start", arrival, rate, i, loops, j.Seq, -late)
						}
						maxLate = max(maxLate, late)
						wakes[at] = true
					}
					tick := r.tick
					switch {
					case rate/float64(loops) <= autoTickRate && (tick != 0 || maxLate != 0):
						t.Errorf("%s %g/s on %d loops: tick %s, a job left %s late; want each at its intended start", arrival, rate, loops, tick, maxLate)
					case rate/float64(loops) > autoTickRate && (tick != 400*time.Microsecond || maxLate >= 400*time.Microsecond):
						t.Errorf("%s %g/s on %d loops: tick %s, latest send %s after its start; want a 400µs tick and under 400µs", arrival, rate, loops, tick, maxLate)
					case len(wakes) > autoTickRate+1 && tick != 0:
						t.Errorf("%s %g/s on %d loops: %d wake-ups in 1 s, want at most %d", arrival, rate, loops, len(wakes), autoTickRate+1)
					case jobs == 0:
						t.Errorf("%s %g/s on %d loops: loop %d got no job", arrival, rate, loops, i)
					}
				}
				if got := newEngine(context.Background(), spec, nil).tick; got != AutoTick(perLoop) {
					t.Errorf("%g/s: the engine chose tick %s, want AutoTick(%g) = %s", rate, got, perLoop, AutoTick(perLoop))
				}
			}
		}
	}
	// An explicit tick is the notebook's: auto does not override it.
	if r := newEngine(context.Background(), Spec{Rate: 50000, Tick: time.Millisecond, Duration: time.Second, MaxInflight: 16}, nil); r.tick != time.Millisecond {
		t.Errorf("tick 1ms at 50,000/s became %s", r.tick)
	}
	if r := newEngine(context.Background(), Spec{Rate: 50000, Duration: time.Second, MaxInflight: 16}, nil); r.tick != 0 {
		t.Errorf("tick 0 (precise) at 50,000/s became %s", r.tick)
	}
}
