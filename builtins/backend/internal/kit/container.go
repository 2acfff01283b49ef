package kit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/bytesize"
)

// This file holds what a container of backend.container and the
// container of backend.postgres(image = ...) share: the run guard that
// polls the engine, how an exit is told, the host pid of its init, and
// the "image" input that follows a tag.

// ContainerPoll is how often a run asks the engine about a container.
const ContainerPoll = 250 * time.Millisecond

// ContainerWatch is one run's watch of one container: it exited, was
// OOM-killed (the engine's own OOMKilled, or the kernel's oom_kill count of
// its cgroup when a process inside died and the container lives on) or
// restarted.
type ContainerWatch struct {
	Eng      *docker.Engine
	ID       string
	Src      string // the trips' source: "container NAME (IMAGE)"
	T0       time.Time
	Limits   cgroup.Limits
	ByUs     func() bool // benchbook stopped it
	Replaced func() bool // .restart() put a new container in its place (nil: never)

	st0   docker.State // as the run started: the engine's first answer
	group *cgroup.Group
	oom0  int64
	mu    sync.Mutex
	trips []guard.Trip
	seen  map[string]bool // kinds tripped already: each once
}

// WatchContainer polls the engine (and the container's cgroup) until the
// returned stop, which gives the trips seen. It returns at once: the
// engine's first answer (the state the run starts from) comes in the
// background. Asked before returning, it held up the window's opening:
// under load an inspect took longer than a 1 s window, and the observers,
// which open after the guards, saw none of its requests.
func WatchContainer(ctx context.Context, w *ContainerWatch) func() []guard.Trip {
	w.seen = map[string]bool{}
	began := make(chan bool, 1)
	go func() { began <- w.begin(ctx) }()
	var once sync.Once
	var running bool
	started := func() bool { // the first answer, once it came: the container ran
		once.Do(func() { running = <-began })
		return running
	}
	stop := guard.Every(ctx, ContainerPoll, func() {
		if started() {
			w.check(ctx)
		}
	})
	return func() []guard.Trip {
		stop()
		if started() {
			w.check(ctx)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		return append([]guard.Trip(nil), w.trips...)
	}
}

// begin asks the engine the state the run starts from, and reads its
// cgroup's OOM kills so far; false, with a fatal trip, when the container
// does not run. One started after T0 restarted after the window opened,
// before the engine answered (its clock is this host's: its processes
// are).
func (w *ContainerWatch) begin(ctx context.Context) bool {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	st0, err := w.Eng.Inspect(qctx, w.ID)
	if err != nil || !st0.Running {
		kind := "exited"
		if st0.OOMKilled {
			kind = "oom_killed"
		}
		w.mu.Lock()
		w.trips = append(w.trips, guard.Trip{Source: w.Src, Kind: kind, Fatal: true,
			Evidence: "not running when the run started: " + ExitEvidence(st0, err, w.Limits)})
		w.mu.Unlock()
		return false
	}
	w.st0 = st0
	if at, err := time.Parse(time.RFC3339Nano, st0.StartedAt); err == nil && at.After(w.T0) {
		w.trip("restarted", fmt.Sprintf("started at %s, after the run's window opened (%s)", st0.StartedAt, w.T0.Format(time.RFC3339Nano)))
	}
	if g, err := cgroup.FromPid(st0.Pid); err == nil {
		if s, err := g.Read(); err == nil {
			w.group, w.oom0 = g, s.OOMKills
		}
	}
	return true
}

func (w *ContainerWatch) check(ctx context.Context) {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	st, err := w.Eng.Inspect(qctx, w.ID)
	byUs := w.ByUs()
	switch {
	case err != nil && w.Replaced != nil && w.Replaced():
		w.trip("restarted", "replaced by a new container (.restart())")
	case err != nil && byUs, err == nil && !st.Running && byUs:
		w.trip("stopped", "stopped by benchbook")
	case err != nil:
		w.trip("exited", ExitEvidence(st, err, w.Limits))
	case !st.Running:
		// The engine may record the OOM kill a moment after the exit
		// (seen in CI: exit code 137, no flag yet, the cgroup gone).
		if st = w.Eng.Settle(qctx, w.ID, st); st.OOMKilled {
			w.trip("oom_killed", ExitEvidence(st, nil, w.Limits))
		} else {
			w.trip("exited", ExitEvidence(st, nil, w.Limits))
		}
	case st.OOMKilled:
		w.trip("oom_killed", ExitEvidence(st, nil, w.Limits))
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
func (w *ContainerWatch) trip(kind, evidence string) {
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
	w.trips = append(w.trips, guard.Trip{At: guard.Since(w.T0), Source: w.Src, Kind: kind, Fatal: true, Evidence: evidence})
}

// ExitEvidence says how a container ended, naming the OOM kill the engine
// recorded.
func ExitEvidence(st docker.State, err error, l cgroup.Limits) string {
	switch {
	case err != nil:
		return "gone: " + err.Error()
	case st.OOMKilled:
		s := fmt.Sprintf("OOMKilled: the engine reports an OOM kill, exit code %d", st.ExitCode)
		if l.Memory > 0 {
			s += fmt.Sprintf(", memory limit %s", bytesize.Format(l.Memory))
		}
		return s
	case st.Error != "":
		return fmt.Sprintf("%s, exit code %d: %s", st.Status, st.ExitCode, st.Error)
	case st.ExitCode == 137 && l.Memory > 0:
		// Docker 20.10 on cgroup v1 can handle the exit before the OOM
		// event and never set OOMKilled (engine.Settle waits 2 s for it).
		return fmt.Sprintf("%s, exit code 137: killed by SIGKILL under a memory limit of %s, most likely by the kernel's OOM killer (the engine recorded no OOM kill)",
			st.Status, bytesize.Format(l.Memory))
	}
	return fmt.Sprintf("%s, exit code %d", st.Status, st.ExitCode)
}

// RunningPid is the host pid of container id's init, 0 when it does not
// run or the engine does not answer within 10 s.
func RunningPid(eng *docker.Engine, id string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := eng.Inspect(ctx, id)
	if err != nil || !st.Running {
		return 0
	}
	return st.Pid
}

// AddImageInput records the image a cell started, by its content id: a tag
// moved to another build since makes the entry stale (CurrentImage), so a
// record is never built from the figures of the image the tag left.
func AddImageInput(th *starlark.Thread, ref, digest string) {
	runtime.AddInput(th, runtime.Input{Kind: "image", Name: ref, Hash: digest})
}

// CurrentImage is the checker of "image" inputs: what ref names on the
// engine now.
func CurrentImage(ref string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eng, err := docker.Connect(ctx)
	if err != nil {
		return "", err
	}
	defer eng.Close()
	return eng.ImageDigest(ctx, ref)
}
