package loadgen

import (
	"time"

	"github.com/benchbook/benchbook/runtime/guard"
)

// Run guards: every run watches the observers that can trip (a process, a
// cluster, a host guard: guard.Watcher) and the box (guard.DefaultHost
// unless an observer is itself a host guard). A fatal trip makes the run
// invalid; the others are warnings on the run, and so on every comparison
// that uses it.

// hostGuard marks an observer that watches the box itself, replacing the
// default host guard.
type hostGuard interface{ WatchesHost() }

// startWatchers starts the guards at t0, the opening of the window.
func (r *engine) startWatchers(t0 time.Time) []func() []guard.Trip {
	var stops []func() []guard.Trip
	ownHost := false
	for _, o := range r.spec.Observers {
		if w, ok := o.(guard.Watcher); ok {
			stops = append(stops, w.Watch(r.ctx, t0))
		}
		_, isHost := o.(hostGuard)
		ownHost = ownHost || isHost
	}
	if !ownHost {
		stops = append(stops, guard.DefaultHost().Watch(r.ctx, t0))
	}
	return stops
}

// stopWatchers collects the trips, in time order, and turns the non-fatal
// ones into the run's warnings.
func stopWatchers(stops []func() []guard.Trip, res *Result) {
	for _, stop := range stops {
		res.Trips = append(res.Trips, stop()...)
	}
	guard.Sort(res.Trips)
	for _, t := range res.Trips {
		if !t.Fatal {
			res.Warnings = append(res.Warnings, "guard: "+t.String())
		}
	}
	if why := guard.Invalid(res.Trips); why != "" {
		res.Warnings = append(res.Warnings, "INVALID: "+why)
	}
}
