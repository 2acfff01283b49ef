// Package host is the notebook's `host` module: the machine it measures on,
// and load gates. It tells a notebook the machine's fingerprint, its load,
// and the CPU that other processes take from it, and gates runs on a quiet
// box.
//
//	host.info() -> struct(name, cpu, cores, mem_bytes, kernel, load, fingerprint)
//	host.loadavg() -> (load1, load5, load15)
//	    (not host.load: load is a Starlark keyword, even after a dot)
//	host.observe(pid) -> None
//	    counts pid and its descendants as ours (a backend started elsewhere);
//	    this process and its descendants always are.
//	host.foreign_cpu(interval = "1s") -> cores used by other processes over the interval
//	host.gate(max_load1 = None, wait = "60s", foreign_cpu_max = None, poll = "1s")
//	    -> struct(load1, foreign_cpu, busy, waited_s)
//	    waits until load1 <= max_load1 and foreign CPU <= foreign_cpu_max,
//	    or gives up after wait and marks the run busy.
//	host.probe() -> probe; probe.stop() -> struct(load1_before, load1_after, foreign_cpu, seconds)
//	    brackets a run: load before and after, foreign CPU over it.
//	host.guard(disk_free_min = "1GiB", path = ".", memory_pressure_max = 10.0, swap_pages_max = 100.0)
//	    -> the box's run guards, for a workload's observe = [...]: free disk
//	    on path's disk under disk_free_min makes a run invalid; memory stalls
//	    (PSI, % of the run) and swapped pages/s above the maximums warn.
//
// Durations are read by starval.Duration, as in every builtin: "60s" or a
// number of seconds.
package host

import (
	_ "embed"
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/hostinfo"
)

// docs is the module's reference (benchbook help host).
//
//go:embed reference.md
var docs string

// Module is the host module.
func Module() runtime.Module {
	return runtime.Module{Name: "host", Globals: starlark.StringDict{"host": &starlarkstruct.Module{
		Name: "host",
		Members: starlark.StringDict{
			"info":        starlark.NewBuiltin("host.info", info),
			"loadavg":     starlark.NewBuiltin("host.loadavg", loadavg),
			"observe":     starlark.NewBuiltin("host.observe", observe),
			"foreign_cpu": starlark.NewBuiltin("host.foreign_cpu", foreignCPU),
			"gate":        starlark.NewBuiltin("host.gate", gate),
			"probe":       starlark.NewBuiltin("host.probe", probe),
			"guard":       starlark.NewBuiltin("host.guard", guardBuiltin),
		},
	}}, Docs: docs}
}

func info(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs); err != nil {
		return nil, err
	}
	h := hostinfo.Read()
	return starlarkstruct.FromStringDict(starlark.String("host"), starlark.StringDict{
		"name":        starlark.String(h.Name),
		"cpu":         starlark.String(h.CPU),
		"cores":       starlark.MakeInt(h.Cores),
		"mem_bytes":   starlark.MakeUint64(h.MemBytes),
		"kernel":      starlark.String(h.Kernel),
		"load":        loadTuple(h.Load),
		"fingerprint": starlark.String(h.Fingerprint()),
	}), nil
}

func loadTuple(l [3]float64) starlark.Tuple {
	return starlark.Tuple{starlark.Float(l[0]), starlark.Float(l[1]), starlark.Float(l[2])}
}

func loadavg(_ *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs); err != nil {
		return nil, err
	}
	l, err := hostinfo.LoadAvg()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Name(), err)
	}
	return loadTuple(l), nil
}

func observe(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pid int
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "pid", &pid); err != nil {
		return nil, err
	}
	if pid <= 0 {
		return nil, fmt.Errorf("%s: pid must be > 0, got %d", fn.Name(), pid)
	}
	busybox.Observe(thread, pid)
	return starlark.None, nil
}
