package host

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/builtins/internal/cpusample"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/hostinfo"
)

// optFloat reads None (no limit) or a number.
func optFloat(fn, name string, v starlark.Value) (float64, error) {
	if v == starlark.None {
		return math.Inf(1), nil
	}
	f, ok := starlark.AsFloat(v)
	if !ok {
		return 0, fmt.Errorf("%s: %s must be a number or None, got %s", fn, name, v.Type())
	}
	return f, nil
}

// measureForeign samples the CPU over d, or until ctx ends.
func measureForeign(ctx context.Context, d time.Duration, observed []int) (cpusample.Usage, error) {
	a, err := cpusample.Take()
	if err != nil {
		return cpusample.Usage{}, err
	}
	select {
	case <-ctx.Done():
		return cpusample.Usage{}, ctx.Err()
	case <-time.After(d):
	}
	b, err := cpusample.Take()
	if err != nil {
		return cpusample.Usage{}, err
	}
	return cpusample.Between(a, b, observed), nil
}

func foreignCPU(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	interval := starval.PositiveDuration(time.Second)
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "interval?", &interval); err != nil {
		return nil, err
	}
	u, err := measureForeign(runtime.Context(thread), time.Duration(interval), busybox.Observed(thread))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Name(), err)
	}
	return starlark.Float(u.Foreign), nil
}

// GateOptions are host.gate's limits.
type GateOptions struct {
	MaxLoad1      float64 // +Inf: no limit
	ForeignCPUMax float64 // cores; +Inf: no limit
	Wait          time.Duration
	Poll          time.Duration
	Observed      []int
	Progress      io.Writer
}

// GateResult is the state of the box when the gate opened or gave up.
type GateResult struct {
	Load1      float64
	ForeignCPU float64 // cores, over the last poll
	Busy       bool    // still loud after Wait
	Waited     time.Duration
}

// Gate waits for a quiet box: load1 and foreign CPU under their limits. It
// gives up after o.Wait and reports Busy; it returns ctx's error when ctx
// ends first.
func Gate(ctx context.Context, o GateOptions) (GateResult, error) {
	start := time.Now()
	for {
		u, err := measureForeign(ctx, o.Poll, o.Observed)
		if err != nil {
			return GateResult{}, err
		}
		l, err := hostinfo.LoadAvg()
		if err != nil {
			return GateResult{}, err
		}
		r := GateResult{Load1: l[0], ForeignCPU: u.Foreign, Waited: time.Since(start)}
		if r.Load1 <= o.MaxLoad1 && r.ForeignCPU <= o.ForeignCPUMax {
			return r, nil
		}
		if r.Waited >= o.Wait {
			r.Busy = true
			fmt.Fprintf(o.Progress, "host.gate: still busy after %s (load1 %.2f, foreign CPU %.2f cores): run marked busy\n", o.Wait, r.Load1, r.ForeignCPU)
			return r, nil
		}
		fmt.Fprintf(o.Progress, "host.gate: load1 %.2f (max %g), foreign CPU %.2f cores (max %g): waiting, %.0f s of %s\n",
			r.Load1, o.MaxLoad1, r.ForeignCPU, o.ForeignCPUMax, r.Waited.Seconds(), o.Wait)
	}
}

func gate(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var maxLoad, maxForeign starlark.Value = starlark.None, starlark.None
	wait, poll := starval.Duration(60*time.Second), starval.PositiveDuration(time.Second)
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "max_load1?", &maxLoad, "wait?", &wait,
		"foreign_cpu_max?", &maxForeign, "poll?", &poll); err != nil {
		return nil, err
	}
	o, err := gateOptions(thread, fn.Name(), maxLoad, maxForeign, wait, poll)
	if err != nil {
		return nil, err
	}
	r, err := Gate(runtime.Context(thread), o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Name(), err)
	}
	return starlarkstruct.FromStringDict(starlark.String("gate"), starlark.StringDict{
		"load1":       starlark.Float(r.Load1),
		"foreign_cpu": starlark.Float(r.ForeignCPU),
		"busy":        starlark.Bool(r.Busy),
		"waited_s":    starlark.Float(r.Waited.Seconds()),
	}), nil
}

func gateOptions(thread *starlark.Thread, fn string, maxLoad, maxForeign starlark.Value, wait starval.Duration, poll starval.PositiveDuration) (GateOptions, error) {
	o := GateOptions{Wait: time.Duration(wait), Poll: time.Duration(poll), Observed: busybox.Observed(thread), Progress: runtime.Stderr(thread)}
	var err error
	if o.MaxLoad1, err = optFloat(fn, "max_load1", maxLoad); err != nil {
		return o, err
	}
	if o.ForeignCPUMax, err = optFloat(fn, "foreign_cpu_max", maxForeign); err != nil {
		return o, err
	}
	return o, nil
}

// probe starts watching the box around a run.
func probe(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs); err != nil {
		return nil, err
	}
	before, err := hostinfo.LoadAvg()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Name(), err)
	}
	start, err := cpusample.Take()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn.Name(), err)
	}
	stop := func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
			return nil, err
		}
		end, err := cpusample.Take()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		after, _ := hostinfo.LoadAvg()
		u := cpusample.Between(start, end, busybox.Observed(thread))
		return starlarkstruct.FromStringDict(starlark.String("probe"), starlark.StringDict{
			"load1_before": starlark.Float(before[0]),
			"load1_after":  starlark.Float(after[0]),
			"foreign_cpu":  starlark.Float(u.Foreign),
			"seconds":      starlark.Float(u.Seconds),
		}), nil
	}
	return starlarkstruct.FromStringDict(starlark.String("probe"), starlark.StringDict{
		"stop": starlark.NewBuiltin("probe.stop", stop),
	}), nil
}
