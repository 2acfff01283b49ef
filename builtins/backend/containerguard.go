package backend

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/guard"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// The run guards of a container: it exited, was OOM-killed (the engine's
// own OOMKilled, or the kernel's oom_kill count of its cgroup when a
// process inside died and the container lives on) or restarted; its log
// lines count as a process's do.

var _ guard.Watcher = (*containerHandle)(nil)

// containerPoll is how often a run asks the engine about the container.
const containerPoll = 250 * time.Millisecond

// Watch watches the container through a run.
func (h *containerHandle) Watch(ctx context.Context, t0 time.Time) func() []guard.Trip {
	return h.watch(ctx, t0, guard.LogRules{})
}

func (h *containerHandle) watch(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip {
	c := h.current()
	if c == nil {
		return guard.NotRunning("container " + h.spec.Image)
	}
	src := fmt.Sprintf("container %s (%s)", c.Name, c.Image)
	st0, err := h.eng.Inspect(ctx, c.ID)
	if err != nil || !st0.Running {
		trip := guard.Trip{Source: src, Kind: "exited", Fatal: true,
			Evidence: "not running when the run started: " + exitEvidence(st0, err, h.spec.Limits)}
		if st0.OOMKilled {
			trip.Kind = "oom_killed"
		}
		return func() []guard.Trip { return []guard.Trip{trip} }
	}
	byUs := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.stopping
	}
	replaced := func() bool {
		now := h.current()
		return now != nil && now.ID != c.ID
	}
	ended := watchContainer(ctx, &containerWatch{eng: h.eng, id: c.ID, src: src, t0: t0, st0: st0, limits: h.spec.Limits, byUs: byUs, replaced: replaced})
	logs := guard.FollowLog(ctx, t0, src, rules, h.lines())
	return func() []guard.Trip { return append(ended(), logs()...) }
}

// watchContainer polls the engine (and the container's cgroup) until the
// returned stop, which gives the trips seen.
func watchContainer(ctx context.Context, w *containerWatch) func() []guard.Trip {
	w.seen = map[string]bool{}
	if g, err := cgroup.FromPid(w.st0.Pid); err == nil {
		if s, err := g.Read(); err == nil {
			w.group, w.oom0 = g, s.OOMKills
		}
	}
	stop := guard.Every(ctx, containerPoll, func() { w.check(ctx) })
	return func() []guard.Trip {
		stop()
		w.check(ctx)
		w.mu.Lock()
		defer w.mu.Unlock()
		return append([]guard.Trip(nil), w.trips...)
	}
}

// containerWatch is one run's watch of one container.
type containerWatch struct {
	eng      *docker.Engine
	id       string
	src      string
	t0       time.Time
	st0      docker.State
	limits   cgroup.Limits
	byUs     func() bool // benchbook stopped it
	replaced func() bool // .restart() put a new container in its place (nil: never)
	group    *cgroup.Group
	oom0     int64

	mu    sync.Mutex
	trips []guard.Trip
	seen  map[string]bool // kinds tripped already: each once
}

func (w *containerWatch) check(ctx context.Context) {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	st, err := w.eng.Inspect(qctx, w.id)
	byUs := w.byUs()
	switch {
	case err != nil && w.replaced != nil && w.replaced():
		w.trip("restarted", "replaced by a new container (.restart())")
	case err != nil && byUs, err == nil && !st.Running && byUs:
		w.trip("stopped", "stopped by benchbook")
	case err != nil:
		w.trip("exited", exitEvidence(st, err, w.limits))
	case !st.Running:
		// The engine may record the OOM kill a moment after the exit
		// (seen in CI: exit code 137, no flag yet, the cgroup gone).
		if st = w.eng.Settle(qctx, w.id, st); st.OOMKilled {
			w.trip("oom_killed", exitEvidence(st, nil, w.limits))
		} else {
			w.trip("exited", exitEvidence(st, nil, w.limits))
		}
	case st.OOMKilled:
		w.trip("oom_killed", exitEvidence(st, nil, w.limits))
	case st.RestartCount != w.st0.RestartCount || st.StartedAt != w.st0.StartedAt:
		w.trip("restarted", fmt.Sprintf("started at %s, now at %s (%d restarts)", w.st0.StartedAt, st.StartedAt, st.RestartCount))
	}
	if w.group == nil {
		return
	}
	if s, err := w.group.Read(); err == nil && s.OOMKills > w.oom0 {
		w.trip("oom_killed", fmt.Sprintf("the kernel's OOM killer killed %d process(es) in the container (memory limit %s)",
			s.OOMKills-w.oom0, bytesize.Format(s.Limit)))
	}
}

// trip records a fatal trip of kind, once; an OOM kill stands for the
// exit it causes.
func (w *containerWatch) trip(kind, evidence string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[kind] || (kind == "exited" && w.seen["oom_killed"]) {
		return
	}
	if kind == "oom_killed" && w.seen["exited"] { // the engine told the exit before its cause
		for i := range w.trips {
			if w.trips[i].Kind == "exited" {
				w.trips[i].Kind, w.trips[i].Evidence = kind, evidence
			}
		}
		w.seen[kind] = true
		return
	}
	w.seen[kind] = true
	w.trips = append(w.trips, guard.Trip{At: guard.Since(w.t0), Source: w.src, Kind: kind, Fatal: true, Evidence: evidence})
}

// lines follows the container's output from now on.
func (h *containerHandle) lines() guard.Lines {
	h.mu.Lock()
	log := h.log
	h.mu.Unlock()
	return follow(log)
}
