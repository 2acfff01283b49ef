package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
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
						at := r.sendAt(j.due)
						late := at.Sub(j.due)
						if late < 0 {
							t.Fatalf("%s %g/s, loop %d of %d: job %d sent %s before its intended start", arrival, rate, i, loops, j.seq, -late)
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

// Workers (https here) wake once per request whatever the tick, so the
// default tick leaves them precise: a tick would only delay their sends.
func TestAutoTickNotForWorkers(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	tgt, err := NewHTTPTarget(HTTPSpec{URL: srv.URL + "/", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Rate: 8000, Duration: 200 * time.Millisecond, Window: 200 * time.Millisecond, Timeout: time.Second, MaxInflight: 64, TickAuto: true}
	r := newEngine(context.Background(), spec, tgt)
	res := r.run()
	if r.loops != 0 {
		t.Fatalf("https ran on %d event loops, want workers", r.loops)
	}
	if res.Tick != 0 {
		t.Errorf("workers ran with tick %s, want none", res.Tick)
	}
	if res.Count+SumErrors(res.Errors)+res.Dropped != res.Intended || res.Intended != 1600 {
		t.Errorf("intended %d (want 1600) = count %d + errors %v + dropped %d?", res.Intended, res.Count, res.Errors, res.Dropped)
	}
}
