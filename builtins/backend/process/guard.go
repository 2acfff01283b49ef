package process

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// The run guards of a process: it exited or was killed (not by
// benchbook), restarted, or the kernel OOM-killed a process of its limits
// group; error lines in its output warn (guard.FollowLog).

// Watch watches the process through a run.
func (p *Handle) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return p.WatchLog(ctx, t0, guard.LogRules{})
}

// WatchLog is Watch with rules for the lines of its output.
func (p *Handle) WatchLog(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip {
	p.mu.Lock()
	cmd, done, stopping, group := p.cmd, p.done, p.stopping, p.group
	p.mu.Unlock()
	src := "process " + filepath.Base(p.spec.argv[0])
	if cmd == nil || isClosed(done) {
		return guard.NotRunning(src)
	}
	pid := cmd.Process.Pid
	src += fmt.Sprintf(" (pid %d)", pid)
	ended := guard.WatchExit(ctx, done, func() guard.Trip {
		return guard.ExitTrip(src, guard.Since(t0), pid, cmd.ProcessState, stopping.Load())
	})
	logs := guard.FollowLog(ctx, t0, src, rules, p.Lines())
	ooms := kit.OOMWatch(group, src, t0)
	return func() []guard.Trip {
		trips := append(append(ooms(), ended()...), logs()...)
		if now := p.pid(); now != 0 && now != pid {
			trips = append(trips, guard.Trip{At: guard.Since(t0), Source: src, Kind: "restarted", Fatal: true,
				Evidence: fmt.Sprintf("pid %d is now pid %d", pid, now)})
		}
		return trips
	}
}

// Lines follows the process's output from now on.
func (p *Handle) Lines() guard.Lines {
	p.mu.Lock()
	log := p.log
	p.mu.Unlock()
	return kit.Follow(log)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Watched: a process benchbook did not stop on purpose.
func (p *Handle) Watched() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !p.stopping.Load()
}

// Alive: its process runs.
func (p *Handle) Alive() bool { return p.pid() != 0 }

// Serves: the port of its ready check, or one its process tree listens on
// or was seen listening on (once dead, it still served the port: the run
// against it is watched, and invalid).
func (p *Handle) Serves(d guard.Dest) bool {
	if d.Target == starlark.Value(p) {
		return true
	}
	return d.LocalPort(kit.ReadyPort(p.spec.ready)) || p.sockets.Serves(d, procfs.TreePids(p.pid()))
}
