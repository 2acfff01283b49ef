package host

import (
	"context"
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/bytesize"
)

// hostGuard is the value of host.guard(...): the box's run guards with the
// notebook's own thresholds. Passed in a workload's observe list, it
// replaces the default ones (guard.DefaultHost).
type hostGuard struct{ guard.Host }

var _ guard.Watcher = (*hostGuard)(nil)

func (g *hostGuard) String() string {
	return fmt.Sprintf("host.guard(path = %q, disk_free_min = %d, memory_pressure_max = %g, swap_pages_max = %g)",
		g.Path, g.DiskFreeMin, g.MemPressureMax, g.SwapPagesMax)
}
func (g *hostGuard) Type() string          { return "host_guard" }
func (g *hostGuard) Freeze()               {}
func (g *hostGuard) Truth() starlark.Bool  { return true }
func (g *hostGuard) Hash() (uint32, error) { return starlark.String(g.String()).Hash() }

// CompareSameType: two host.guard values are equal when they watch the same
// path with the same thresholds (Hash, of those, agrees).
func (g *hostGuard) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualOnly(op, g.Host == y.(*hostGuard).Host, g, y)
}

// guardBuiltin is host.guard(disk_free_min = "1GiB", path = ".",
// memory_pressure_max = 10.0, swap_pages_max = 100.0).
func guardBuiltin(th *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	g := &hostGuard{guard.DefaultHost()}
	diskMin, path := "", "."
	if err := starlark.UnpackArgs(fn.Name(), args, kwargs, "disk_free_min?", &diskMin, "path?", &path,
		"memory_pressure_max?", &g.MemPressureMax, "swap_pages_max?", &g.SwapPagesMax); err != nil {
		return nil, err
	}
	if diskMin != "" {
		n, err := bytesize.Parse(diskMin)
		if err != nil {
			return nil, fmt.Errorf("%s: disk_free_min: %w", fn.Name(), err)
		}
		g.DiskFreeMin = n
	}
	g.Path = runtime.Path(th, path)
	return g, nil
}

// StartObserving makes a host.guard welcome in observe = [...]: its work is
// Watch (the guards); it adds no figures to the run.
func (g *hostGuard) StartObserving(ctx context.Context) (func(requests int64) (map[string]float64, error), error) {
	return func(int64) (map[string]float64, error) { return nil, nil }, nil
}

// WatchesHost tells the load generator that this observer replaces its
// default host guard.
func (g *hostGuard) WatchesHost() {}
