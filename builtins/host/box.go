package host

import (
	"context"
	"fmt"
	"math"

	"github.com/benchbook/benchbook/runtime/hostinfo"
)

// Box watches the machine over a run's measurement window (issue 32): the
// CPU that other processes used, the load average and the CPU the
// hypervisor stole. Every workload run carries one among its observers,
// so its figures are run attributes: foreign_cpu and steal_cpu (cores,
// averaged over the window) and load1 (the 1-minute load average over the
// window: the mean of its readings at the two ends, as the CPU figures are
// the difference of theirs; read at the end alone it left out a box that
// was loaded when the run began). It samples /proc at the window's two ends
// only, never per request.
type Box struct {
	// Own are the PIDs that count as the measured system besides this
	// process and its descendants: host.observe(pid)'s and the targets'
	// (a container's processes are the engine's children, not ours).
	Own []int
}

// Type names the observer in warnings.
func (b *Box) Type() string { return "host" }

// StartObserving samples the box when the window opens; the returned func
// samples it again when it closes.
func (b *Box) StartObserving(ctx context.Context) (func(int64) (map[string]float64, error), error) {
	start, err := SampleCPU()
	if err != nil {
		return nil, err
	}
	load0, loadErr := loadAvg()
	return func(int64) (map[string]float64, error) {
		end, err := SampleCPU()
		if err != nil {
			return nil, err
		}
		u := Use(start, end, b.Own)
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
