package workload

import (
	"testing"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/builtins/internal/cpusample"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// TestExecRecordsTheBox: workload.exec's runs carry the box's figures as
// the load runs' do (foreign_cpu, steal_cpu, load1), and the command it
// measures is the measured system, not a foreign process: the foreign CPU
// of its window is at most what the whole box used during the call less
// what the measured commands used themselves (counted as foreign, it
// would be at least that).
func TestExecRecordsTheBox(t *testing.T) {
	before, err := cpusample.Take()
	if err != nil {
		t.Fatal(err)
	}
	g := mustExec(t, `r = workload.exec(["sh", "-c", "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"], runs = 3, warmup = 0)`, nil)
	after, err := cpusample.Take()
	if err != nil {
		t.Fatal(err)
	}
	r := g["r"].(*Run)
	for _, k := range []string{"foreign_cpu", "steal_cpu", "load1"} {
		if v, ok := r.d.Observed[k]; !ok || v < 0 {
			t.Errorf("exec run's %s = %v (recorded: %v)", k, v, ok)
		}
	}
	var cmdCPU float64 // core-seconds the measured commands used
	for _, ms := range r.d.CPUMs {
		cmdCPU += ms / 1000
	}
	boxCPU := float64(after.Busy-before.Busy) / procfs.TicksPerSecond
	foreign := r.d.Observed["foreign_cpu"] * r.d.Measured.Seconds()
	if cmdCPU < 0.1 {
		t.Fatalf("the commands used %.3f core-s: too little to tell", cmdCPU)
	}
	if slack := 0.05; foreign > boxCPU-cmdCPU+slack {
		t.Errorf("foreign CPU %.3f core-s over the window, but the box used %.3f during the call, %.3f of it the measured commands: they were counted as foreign",
			foreign, boxCPU, cmdCPU)
	}
	if hasWarning(r, "busy box") != (r.d.Observed["foreign_cpu"] >= busybox.BusyCores(boxCores()) || r.d.Observed["steal_cpu"] >= busybox.BusyStealCores) {
		t.Errorf("busy warning %q does not match foreign %.2f, steal %.2f", r.d.Warnings, r.d.Observed["foreign_cpu"], r.d.Observed["steal_cpu"])
	}
}
