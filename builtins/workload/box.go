package workload

import (
	goruntime "runtime"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// withBox puts the box's observer (host.Box: foreign CPU, load average and
// steal over the window) before a run's own observers, so every run
// records how busy the machine was. The measured system is this process
// and its descendants, what host.observe named, and the processes of the
// targets in observe (a container's are the engine's, not ours).
func withBox(th *starlark.Thread, obs []loadgen.Observer, observe *starlark.List) []loadgen.Observer {
	own := host.Observed(th)
	if observe != nil {
		for i := range observe.Len() {
			if pid, ok := starval.Number(starval.Attr(observe.Index(i), "pid")); ok && pid > 0 {
				own = append(own, int(pid))
			}
		}
	}
	return append([]loadgen.Observer{&host.Box{Own: own}}, obs...)
}

// noteBox warns on a run whose window the box was busy for, with the
// figures (compare says it again for the comparison, with both arms).
func (r *Run) noteBox() {
	f, ok := r.d.Observed["foreign_cpu"]
	if !ok {
		return
	}
	if w := host.BusyWarning(f, r.d.Observed["steal_cpu"], r.d.Observed["load1"], boxCores()); w != "" {
		r.d.Warnings = append(r.d.Warnings, w)
	}
}

// boxCores is the size of this box, for the busy threshold.
func boxCores() int { return goruntime.NumCPU() }
