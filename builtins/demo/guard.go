package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

var _ guard.Watcher = (*Handle)(nil)

// Watch is the demo's run guard: its exit or kill during a run makes the
// run invalid, as for any target process.
func (h *Handle) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	pid := h.cmd.Process.Pid
	src := fmt.Sprintf("demo (pid %d)", pid)
	select {
	case <-h.done:
		return guard.NotRunning(src)
	default:
	}
	return guard.WatchExit(ctx, h.done, func() guard.Trip {
		return guard.ExitTrip(src, guard.Since(t0), pid, h.cmd.ProcessState, h.ours.Load())
	})
}
