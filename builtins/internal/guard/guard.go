// Package guard watches a run's targets and box for what makes the run no
// measurement. It records a target that exited, was killed or restarted,
// crashed database backends, a full disk (fatal trips: the run is invalid),
// or server log errors, memory pressure and swapping (warnings).
//
// A Watcher is anything a workload observes that can trip (a process, a
// PostgreSQL cluster, the box); the workload starts every watcher when its
// measurement window opens and stops them when it closes.
package guard

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Trip is one thing that went wrong around a run, with its evidence.
type Trip struct {
	At       float64 `json:"at"`       // seconds since the measurement window opened
	Source   string  `json:"source"`   // what tripped: "process sh (pid 42)", "postgres", "host"
	Kind     string  `json:"kind"`     // exited, killed, restarted, crashed_backend, log_errors, disk, memory_pressure, swap
	Fatal    bool    `json:"fatal"`    // the run is not a measurement
	Evidence string  `json:"evidence"` // the exit status, the log line, the figures
}

// String is the trip as the record shows it.
func (t Trip) String() string {
	return fmt.Sprintf("%s %s at %.1fs: %s", t.Source, strings.ReplaceAll(t.Kind, "_", " "), t.At, t.Evidence)
}

// Watcher is a target (or the box) that a run watches.
type Watcher interface {
	// Watch starts watching at t0, the opening of the measurement window;
	// stop ends it and returns the trips seen since.
	Watch(ctx context.Context, t0 time.Time) (stop func() []Trip)
}

// Invalid returns the reason a run with these trips is no measurement: the
// first fatal trip, and how many more; "" when there is none.
func Invalid(trips []Trip) string {
	var fatal []Trip
	for _, t := range trips {
		if t.Fatal {
			fatal = append(fatal, t)
		}
	}
	if len(fatal) == 0 {
		return ""
	}
	if len(fatal) == 1 {
		return fatal[0].String()
	}
	return fmt.Sprintf("%s (and %d more fatal trips)", fatal[0], len(fatal)-1)
}

// Sort orders trips by time, then source.
func Sort(trips []Trip) {
	sort.SliceStable(trips, func(i, j int) bool {
		if trips[i].At != trips[j].At {
			return trips[i].At < trips[j].At
		}
		return trips[i].Source < trips[j].Source
	})
}

// Since is seconds from t0 to now: a trip's At.
func Since(t0 time.Time) float64 { return time.Since(t0).Seconds() }
