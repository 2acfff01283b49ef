package demo

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"go.starlark.net/starlark"

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

var _ guard.Target = (*Handle)(nil)

// Watched: the demo was not stopped on purpose.
func (h *Handle) Watched() bool { return !h.ours.Load() }

// Alive: the demo process runs.
func (h *Handle) Alive() bool {
	select {
	case <-h.done:
		return false
	default:
		return true
	}
}

// Serves: its URL's port on this machine.
func (h *Handle) Serves(d guard.Dest) bool {
	if d.Target == starlark.Value(h) {
		return true
	}
	u, err := url.Parse(h.url)
	if err != nil {
		return false
	}
	port, _ := strconv.Atoi(u.Port())
	return d.LocalPort(port)
}
