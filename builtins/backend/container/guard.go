package container

import (
	"context"
	"fmt"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// The run guards of a container: it exited, was OOM-killed (the engine's
// own OOMKilled, or the kernel's oom_kill count of its cgroup when a
// process inside died and the container lives on) or restarted
// (kit.WatchContainer); its log lines count as a process's do.

// Watch watches the container through a run.
func (h *Handle) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return h.WatchLog(ctx, t0, guard.LogRules{})
}

// WatchLog is Watch with rules for the lines of its output.
func (h *Handle) WatchLog(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip {
	c := h.current()
	if c == nil {
		return guard.NotRunning("container " + h.spec.Image)
	}
	src := fmt.Sprintf("container %s (%s)", c.Name, c.Image)
	logs := guard.FollowLog(ctx, t0, src, rules, h.Lines()) // from its length now, before the engine is asked
	byUs := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.stopping
	}
	replaced := func() bool {
		now := h.current()
		return now != nil && now.ID != c.ID
	}
	ended := kit.WatchContainer(ctx, &kit.ContainerWatch{Eng: h.eng, ID: c.ID, Src: src, T0: t0, Limits: h.spec.Limits, ByUs: byUs, Replaced: replaced})
	return func() []guard.Trip { return append(ended(), logs()...) }
}

// Lines follows the container's output from now on.
func (h *Handle) Lines() guard.Lines {
	h.mu.Lock()
	log := h.log
	h.mu.Unlock()
	return kit.Follow(log)
}

// Watched: a container benchbook did not stop or remove.
func (h *Handle) Watched() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c != nil && !h.stopping
}

// Alive: the engine runs it.
func (h *Handle) Alive() bool { return h.pid() != 0 }

// Serves: the port of its ready check, or one its processes listen on or
// were seen listening on (on the host's network, as by default).
func (h *Handle) Serves(d guard.Dest) bool {
	if d.Target == starlark.Value(h) {
		return true
	}
	return d.LocalPort(kit.ReadyPort(h.ready)) || h.sockets.Serves(d, procfs.TreePids(h.pid()))
}
