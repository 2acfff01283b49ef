// Package busybox is what a run knows of the machine it ran on beyond its own
// figures: the Observer that measures the CPU other processes used, the
// hypervisor stole and the load average over a run's window; the figures
// from which a run counts as busy, and its warning; and the PIDs a session
// counts as the measured system rather than foreign load (host.observe).
package busybox

import (
	"context"
	"fmt"
	"math"
	"sync"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/cpusample"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/hostinfo"
)

// Observer watches the machine over a run's measurement window (issue 32): the
// CPU that other processes used, the load average and the CPU the
// hypervisor stole. Every workload run carries one among its observers,
// so its figures are run attributes: foreign_cpu and steal_cpu (cores,
// averaged over the window) and load1 (the 1-minute load average over the
// window: the mean of its readings at the two ends, as the CPU figures are
// the difference of theirs; read at the end alone it left out a box that
// was loaded when the run began). It samples /proc at the window's two ends
// only, never per request.
type Observer struct {
	// Own are the PIDs that count as the measured system besides this
	// process and its descendants: host.observe(pid)'s and the targets'
	// (a container's processes are the engine's children, not ours).
	Own []int
}

// Type names the observer in warnings.
func (b *Observer) Type() string { return "host" }

// StartObserving samples the box when the window opens; the returned func
// samples it again when it closes.
func (b *Observer) StartObserving(ctx context.Context) (func(int64) (map[string]float64, error), error) {
	start, err := cpusample.Take()
	if err != nil {
		return nil, err
	}
	load0, loadErr := loadAvg()
	return func(int64) (map[string]float64, error) {
		end, err := cpusample.Take()
		if err != nil {
			return nil, err
		}
		u := cpusample.Between(start, end, b.Own)
		figs := map[string]float64{"foreign_cpu": u.Foreign, "steal_cpu": u.Steal}
		if load1, err := loadAvg(); err == nil && loadErr == nil {
			figs["load1"] = (load0[0] + load1[0]) / 2
		}
		return figs, nil
	}, nil
}

// loadAvg reads /proc/loadavg; a variable so a test can play a load that
// changes over a window.
var loadAvg = hostinfo.LoadAvg

// BusyCores is the foreign CPU, in cores, from which a run counts as busy
// on a box of the given size: a quarter of a core, or a tenth of the box
// if that is more. Other processes taking that much share the caches, the
// memory bandwidth and the scheduler with the target and the load.
func BusyCores(cores int) float64 { return math.Max(0.25, 0.1*float64(cores)) }

// BusyStealCores is the CPU steal from which a run counts as busy: the
// hypervisor gave a tenth of a core to other guests.
const BusyStealCores = 0.1

// BusyPrefix starts every run's busy warning: compare folds them into one
// line of its own, with every run's figures.
const BusyPrefix = "busy box:"

// BusyWarning is a run's warning when the box was busy over its window,
// "" when it was not.
func BusyWarning(foreign, steal, load1 float64, cores int) string {
	if !(foreign >= BusyCores(cores) || steal >= BusyStealCores) {
		return ""
	}
	return fmt.Sprintf(BusyPrefix+" other processes used %.2f cores (of %d) and the hypervisor stole %.2f over the window, load average %.1f: the figures share the machine with them",
		foreign, cores, steal, load1)
}

// observedPIDs are the PIDs host.observe named in one session (one
// benchbook run), kept with runtime.SessionValue.
type observedPIDs struct {
	mu   sync.Mutex
	pids []int
}

type observedKey struct{}

func observedIn(thread *starlark.Thread) *observedPIDs {
	return runtime.SessionValue(thread, observedKey{}, func() *observedPIDs { return &observedPIDs{} })
}

// Observe counts pid (and its descendants) as part of the measured system
// rather than foreign load, for the rest of the session. Backends that
// attach to a server benchbook did not start call it with the server's PID.
func Observe(thread *starlark.Thread, pid int) {
	o := observedIn(thread)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pids = append(o.pids, pid)
}

// Observed returns the PIDs observed in the thread's session.
func Observed(thread *starlark.Thread) []int {
	o := observedIn(thread)
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]int(nil), o.pids...)
}
