package fleet

import (
	"context"
	"strings"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// observers sample the server around a fleet's measurement window, on
// this machine's clock, as a local run's do around its own.
type observers struct {
	spec     loadgen.Spec
	done     chan struct{} // closed when run has stopped them
	started  bool          // set by OnStart, on the caller's goroutine
	totals   map[string]float64
	trips    []guard.Trip // the observed targets' run guards (a process died...)
	warnings []string
}

// run starts the observers when the window opens and stops them when it
// closes (or at Ctrl-C), asking each for its figures per one request: its
// totals, which finish divides by the merged count once it is known.
func (o *observers) run(ctx context.Context, at time.Time) {
	defer close(o.done)
	if len(o.spec.Observers) == 0 || !loadgen.SleepUntil(ctx, at.Add(o.spec.Warmup)) {
		return
	}
	w := loadgen.StartWatch(ctx, o.spec.Observers, nil, time.Now(), false, nil) // each agent guards its own host
	loadgen.SleepUntil(ctx, at.Add(o.spec.Warmup+o.spec.Duration))
	var warnings []string
	o.totals, o.trips, warnings = w.Stop(1)
	o.warnings = append(o.warnings, warnings...)
}

// finish gives the merged run the observers' figures, warnings and trips,
// as loadgen gives a local run its own: the non-fatal trips of the
// observed targets become warnings (the agents' came with their runs), a fatal one makes the run
// invalid, so compare refuses it and abab runs it again.
func (o *observers) finish(res *loadgen.Result) {
	if o.started {
		<-o.done
		res.Warnings = append(res.Warnings, o.warnings...)
		res.Observed = o.figures(res.Count)
		res.Trips = append(res.Trips, o.trips...)
	}
	guard.Sort(res.Trips)
	// The agents' trips are in their warnings already (each agent's
	// loadgen said them, Merge kept them and said a lost agent's): only
	// the observers' here.
	res.Warnings = append(res.Warnings, loadgen.TripWarnings(o.trips)...)
}

// figures are the observers' figures for count requests: every observer
// names a figure NAME_per_req for NAME / requests, so with one request it
// gave NAME, divided here.
func (o *observers) figures(count int64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range o.totals {
		if strings.HasSuffix(k, "_per_req") {
			if count == 0 {
				continue
			}
			v /= float64(count)
		}
		out[k] = v
	}
	return out
}

// WindowWatch samples observers around a measurement window that opens at
// a start instant plus a warm-up, on this machine's clock, as a fleet's
// coordinator does: for a workload.concurrent group with fleets, whose
// requests are counted only when every part has reported.
type WindowWatch struct{ o *observers }

// WatchWindow starts watching spec.Observers over the window from
// at + spec.Warmup for spec.Duration.
func WatchWindow(ctx context.Context, spec loadgen.Spec, at time.Time) *WindowWatch {
	o := &observers{spec: spec, done: make(chan struct{}), started: true}
	go o.run(ctx, at)
	return &WindowWatch{o}
}

// Finish waits for the window's end and gives res the observers' figures
// per one of res.Count requests, their warnings and their trips.
func (w *WindowWatch) Finish(res *loadgen.Result) { w.o.finish(res) }
