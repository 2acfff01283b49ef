package workload

import (
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// A run's late observers (loadgen.LateObserver: one whose first snapshot
// came after requests of the window) as the notebook sees them:
// run.late_observers, and the reason a figure it left out is missing.

// WhyMissing says why the run has no figure name that an observer would
// have given: it took its first snapshot after all the run's requests, so
// it had none to give a figure per request for. "" when that is not why.
// compare, plot and verdict ask it (through starval) when a metric is
// missing; a tag's run answers from its whole run, whose window it shares.
func (r *Run) WhyMissing(name string) string {
	for _, l := range r.lateObservers() {
		if slices.Contains(l.LeftOut, name) {
			return l.Reason()
		}
	}
	return ""
}

// lateObservers are the run's, or for a tag's run its whole run's: the
// observers watched the one window.
func (r *Run) lateObservers() []loadgen.LateObserver {
	if r.parent != nil {
		r = r.parent
	}
	if r.d.Result == nil {
		return nil
	}
	return r.d.LateObservers
}

// lateList is run.late_observers: each late observer as a struct.
func lateList(late []loadgen.LateObserver) *starlark.List {
	l := make([]starlark.Value, len(late))
	for i, o := range late {
		l[i] = starlarkstruct.FromStringDict(starlark.String("late_observer"), starlark.StringDict{
			"observer": starlark.String(o.Observer), "late_s": starlark.Float(o.Late.Seconds()),
			"before": starlark.MakeInt64(o.Before), "requests": starlark.MakeInt64(o.Requests),
			"left_out": starval.StringList(o.LeftOut),
		})
	}
	return starlark.NewList(l)
}
