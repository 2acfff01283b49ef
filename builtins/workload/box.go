package workload

import (
	goruntime "runtime"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
)

// withBox puts the box's observer (busybox.Observer: foreign CPU, load average and
// steal over the window) before a run's own observers, so every run
// records how busy the machine was. The measured system is this process
// and its descendants, what host.observe named, and the processes of the
// targets in observe and of every target the notebook started (a
// container's are the engine's, not ours).
func withBox(th *starlark.Thread, obs []loadgen.Observer, observe *starlark.List) []loadgen.Observer {
	own := busybox.Observed(th)
	var targets []starlark.Value
	if observe != nil {
		for i := range observe.Len() {
			targets = append(targets, observe.Index(i))
		}
	}
	// Every target the notebook started is the measured system too,
	// observed or not (targets.go): its CPU is not another process's.
	for _, t := range runtime.SessionValue(th, guard.TargetsKey, guard.NewTargets).Watched() {
		if v, ok := t.(starlark.Value); ok {
			targets = append(targets, v)
		}
	}
	for _, t := range targets {
		if pid, ok := starval.Number(starval.Attr(t, "pid")); ok && pid > 0 {
			own = append(own, int(pid))
		}
	}
	return append([]loadgen.Observer{&busybox.Observer{Own: own}}, obs...)
}

// noteBox warns on a run whose window the box was busy for, with the
// figures (compare says it again for the comparison, with both arms).
func (r *Run) noteBox() {
	f, ok := r.d.Observed["foreign_cpu"]
	if !ok {
		return
	}
	if w := busybox.BusyWarning(f, r.d.Observed["steal_cpu"], r.d.Observed["load1"], boxCores()); w != "" {
		r.d.Warnings = append(r.d.Warnings, w)
	}
}

// boxCores is the size of this box, for the busy threshold.
func boxCores() int { return goruntime.NumCPU() }
