package loadgen

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// Run guards: every run watches the observers that can trip (a process, a
// cluster, a host guard: guard.Watcher) and the box (guard.DefaultHost
// unless an observer is itself a host guard). A fatal trip makes the run
// invalid; the others are warnings on the run, and so on every comparison
// that uses it.

// hostGuard marks an observer that watches the box itself, replacing the
// default host guard.
type hostGuard interface{ WatchesHost() }

// Watch is what watches a measurement from the opening of its window:
// the observers' figures and the run guards. The load generator, a fleet's
// coordinator and workload.exec all measure through one.
type Watch struct {
	figures  []observed
	guards   []func() []guard.Trip
	warnings []string
	late     []LateObserver // set by Stop
}

// LateObserver is an observer whose first snapshot came after some of the
// window's requests had been counted: on a loaded box a snapshot over a
// slow server took longer than a 1 s window. Its figures per request count
// the requests after its snapshot; one that saw none has none, and LeftOut
// names them, which the run tells whoever reads one (Reason).
type LateObserver struct {
	Observer string        `json:"observer"`           // its type, as its warnings name it
	Late     time.Duration `json:"late_ns"`            // from the window's opening to its first snapshot
	Before   int64         `json:"before"`             // the run's successful requests counted before that snapshot
	Requests int64         `json:"requests"`           // the run's successful requests in all
	LeftOut  []string      `json:"left_out,omitempty"` // its figures per request, left out: it saw none of the requests
}

// Reason says how late the observer was, for a figure it left out.
func (l LateObserver) Reason() string {
	after := fmt.Sprintf("after %d of the run's %d requests", l.Before, l.Requests)
	if l.Before >= l.Requests {
		after = fmt.Sprintf("after all %d requests", l.Requests)
	}
	return fmt.Sprintf("the observer %q took its first snapshot %s after the window opened (%s)", l.Observer, fmtLate(l.Late), after)
}

// fmtLate is a delay as a reader takes it in: "1.2 s", "40 ms".
func fmtLate(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// perRequest are the names of figs that are per request (NAME_per_req,
// every observer's convention), sorted.
func perRequest(figs map[string]float64) []string {
	var out []string
	for k := range figs {
		if strings.HasSuffix(k, "_per_req") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Late are the observers Stop found late: their first snapshot came after
// more than a tenth of the run's requests, or after all of them.
func (w *Watch) Late() []LateObserver { return w.late }

// observed is an observer whose window is open: its stop, and the
// requests already counted when it opened its window.
type observed struct {
	what   string
	stop   func(int64) (map[string]float64, error)
	before int64
	late   time.Duration // from t0 to its first snapshot
}

// preparer is handle.Preparer as loadgen sees it: an observer whose
// window's slow part (a connection) can be done before the window opens.
type preparer interface {
	PrepareObserving(ctx context.Context) (open func() (func(int64) (map[string]float64, error), error), cancel func(), err error)
}

// Prepared are a run's observers readied before its window (Prepare), one
// entry per observer.
type Prepared []prepared

// prepared is what PrepareObserving gave an observer; a zero one (the
// observer prepares nothing) opens with StartObserving at the window.
type prepared struct {
	open   func() (func(int64) (map[string]float64, error), error)
	cancel func() // nil once opened
	err    error
}

// Prepare does now, while the warm-up runs, the slow part of opening the
// window of each observer that has one: on a loaded box a cluster's
// connection took a 1 s window's whole second, and the observer then saw
// none of its requests.
func Prepare(ctx context.Context, observers []Observer) Prepared {
	p := make(Prepared, len(observers))
	for i, o := range observers {
		if pr, ok := o.(preparer); ok {
			p[i].open, p[i].cancel, p[i].err = pr.PrepareObserving(ctx)
		}
	}
	return p
}

// Cancel releases what was prepared and never opened.
func (p Prepared) Cancel() {
	for i := range p {
		if c := p[i].cancel; c != nil {
			p[i].cancel = nil
			c()
		}
	}
}

// StartWatch starts the observers and the guards at t0: every observer
// that is a guard.Watcher, and with host the default host guard unless an
// observer watches the host itself (a fleet's coordinator passes false:
// each agent watches its own).
//
// ready, when not nil, holds the observers Prepare readied: their windows
// open with the first snapshot alone.
//
// count, when not nil, gives the successful requests counted so far. An
// observer opens its window when its first snapshot is taken (a cluster's
// after a connection and a few queries: seconds on a loaded box, while the
// requests go on), so each observer's per-request figures divide by the
// requests counted after its own opening, not by all the run's.
func StartWatch(ctx context.Context, observers []Observer, ready Prepared, t0 time.Time, host bool, count func() int64) *Watch {
	w := &Watch{}
	// The guards first: what the window's first requests made a server
	// log must be in the run's trips, while the observers' figures align
	// themselves to the requests counted as they open. Each guard follows
	// its log from its length now, and asks anything slow in the background
	// (a cluster its start time, a container's engine its state), so that
	// the observers' first snapshots follow at once.
	for _, o := range observers {
		if g, ok := o.(guard.Watcher); ok {
			w.guards = append(w.guards, g.Watch(ctx, t0))
		}
		if _, ok := o.(hostGuard); ok {
			host = false
		}
	}
	if host {
		w.guards = append(w.guards, guard.DefaultHost().Watch(ctx, t0))
	}
	// Each observer's first snapshot is taken at once, side by side: one
	// slow to take its own (a query to a CPU-quota'd server) must not make
	// the others late too.
	opened := make([]observed, len(observers))
	errs := make([]error, len(observers))
	var wg sync.WaitGroup
	for i, o := range observers {
		var p prepared
		if ready != nil {
			p = ready[i]
			ready[i].cancel = nil // the window owns what was prepared
		}
		wg.Go(func() { opened[i], errs[i] = openObserver(ctx, o, p, t0, count) })
	}
	wg.Wait()
	for i, o := range observers {
		if errs[i] != nil {
			w.warnings = append(w.warnings, fmt.Sprintf("observer %s: %v", o.Type(), errs[i]))
			continue
		}
		w.figures = append(w.figures, opened[i])
	}
	return w
}

// openObserver opens o's window: its first snapshot (with what Prepare
// readied, if anything), then the requests counted so far and how long
// after t0 that was.
func openObserver(ctx context.Context, o Observer, p prepared, t0 time.Time, count func() int64) (observed, error) {
	var stop func(int64) (map[string]float64, error)
	var err error
	switch {
	case p.err != nil:
		err = p.err
	case p.open != nil:
		stop, err = p.open()
	default:
		stop, err = o.StartObserving(ctx)
	}
	if err != nil {
		return observed{}, err
	}
	// An observer's first snapshot ends its start (the slow part, a
	// connection, comes before it): the count now is the closest.
	var before int64
	if count != nil {
		before = count()
	}
	return observed{what: o.Type(), stop: stop, before: before, late: max(time.Since(t0), 0)}, nil
}

// Stop ends the watch: the observers' figures for n successful requests
// (a later observer's figure wins), the guards' trips in time order
// (TripWarnings turns them into warnings), and the observers' failures.
// An observer that failed in part keeps the figures it could take.
func (w *Watch) Stop(n int64) (figures map[string]float64, trips []guard.Trip, warnings []string) {
	figures = map[string]float64{}
	warnings = w.warnings
	for _, o := range w.figures {
		seen := max(n-o.before, 0)
		late := LateObserver{Observer: o.what, Late: o.late, Before: o.before, Requests: n}
		var figs map[string]float64
		var err error
		if n > 0 && seen == 0 {
			// It saw none of the run's requests: a figure per request of
			// it would divide by nothing. Asked for one request, it names
			// them (every observer's NAME_per_req is NAME / requests), and
			// the run leaves them out saying why.
			figs, err = o.stop(1)
			late.LeftOut = perRequest(figs)
			for _, k := range late.LeftOut {
				delete(figs, k)
			}
			w.late = append(w.late, late)
			warning := late.Reason()
			if len(late.LeftOut) > 0 {
				warning += fmt.Sprintf(": its figures per request are left out of the run (%s)", strings.Join(late.LeftOut, ", "))
			}
			warnings = append(warnings, warning)
		} else {
			if o.before > 0 && n > 0 && o.before*10 > n {
				w.late = append(w.late, late)
				warnings = append(warnings, fmt.Sprintf("observer %s: its window opened late, %s after the run's, after %d of the run's %d requests: "+
					"its per-request figures count the %d after it", o.what, fmtLate(o.late), o.before, n, seen))
			}
			figs, err = o.stop(seen)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("observer: %v", err))
		}
		for k, v := range figs {
			figures[k] = v
		}
	}
	for _, stop := range w.guards {
		trips = append(trips, stop()...)
	}
	guard.Sort(trips)
	return figures, trips, warnings
}

// TripWarnings are a measurement's trips as its warnings: each non-fatal
// one, and what makes the measurement invalid if one was fatal.
func TripWarnings(trips []guard.Trip) []string {
	var w []string
	for _, t := range trips {
		if !t.Fatal {
			w = append(w, "guard: "+t.String())
		}
	}
	if why := guard.Invalid(trips); why != "" {
		w = append(w, "INVALID: "+why)
	}
	return w
}
