package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime"
)

// profile = True on a workload samples the run's targets on-CPU with
// Linux perf over its measured window, and the run keeps the profile
// (run.profile: starprofile.Value). perf starts before the warm-up with
// sampling off (0.3-3.6 s on a busy box: the run's wall time grows by
// that, its window does not), sampling opens when the window opens and
// closes when it closes: an observer placed first, so nothing is sampled
// of the warm-up or of the observers' own work after the window.
//
// The targets: profile = True takes the targets the run's traffic reaches
// (the session's started targets that serve its URL, DSN or handle) and
// those observe lists; profile = [h, pid, ...] takes those. workload.exec
// with profile = True samples the command it runs: perf follows benchbook
// itself (each run is a fork of it) and keeps its children's samples only.

// profileArg is the profile argument: False (the default), True, or a
// list of targets (handles, pids); and profile_hz, the sampling rate.
type profileArg struct {
	on       bool
	explicit []starlark.Value // nil: the run's own targets
	hz       int              // 0: profile.DefaultHz
}

// maxProfileHz bounds profile_hz: at 1999 Hz perf already cost the target
// +41 % CPU per request (bench/profile), and the kernel lowers its own
// limit (perf_event_max_sample_rate) when sampling takes too long.
const maxProfileHz = 5000

// check refuses a profile_hz out of range, or given without profile.
func (p profileArg) check(name string) error {
	switch {
	case p.hz == 0:
		return nil
	case !p.on:
		return fmt.Errorf("%s: profile_hz = %d without profile = True (or a list of targets): nothing is sampled", name, p.hz)
	case p.hz < 1 || p.hz > maxProfileHz:
		return fmt.Errorf("%s: profile_hz must be in 1..%d, got %d", name, maxProfileHz, p.hz)
	}
	return nil
}

func (p *profileArg) Unpack(v starlark.Value) error {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil
	case starlark.Bool:
		p.on = bool(v)
		return nil
	case *starlark.List, starlark.Tuple:
		items := starval.Items(v)
		if len(items) == 0 {
			return errors.New("an empty list of targets: give True (the run's own targets) or the targets to sample")
		}
		p.on, p.explicit = true, items
		return nil
	}
	return fmt.Errorf("want True, False or a list of targets (handles or pids), got %s", v.Type())
}

// profTarget is one target to sample.
type profTarget struct {
	t   profile.Target
	key any // the value it came from, to sample each once
}

// targets resolves the argument for a run whose traffic goes to d. With
// profile = True, a target that cannot be sampled (a cluster reached by
// DSN in observe) is left out with a warning when others can be.
func (p profileArg) targets(name string, th *starlark.Thread, observe *starlark.List, d *guard.Dest) ([]profTarget, []string, error) {
	if p.explicit != nil {
		var out []profTarget
		for i, v := range p.explicit {
			t, err := explicitTarget(v)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: profile[%d]: %w", name, i, err)
			}
			out = addTarget(out, t)
		}
		return out, nil, nil
	}
	var out []profTarget
	var errs []error
	add := func(v any) {
		h, ok := unwatched(v).(handle.Profiled)
		if !ok {
			return
		}
		t, err := h.ProfileTarget()
		if err != nil {
			errs = append(errs, err)
			return
		}
		out = addTarget(out, profTarget{t: t, key: h})
	}
	if observe != nil {
		for i := range observe.Len() {
			add(observe.Index(i))
		}
	}
	for _, t := range runtime.SessionValue(th, guard.TargetsKey, guard.NewTargets).Watched() {
		if d != nil && t.Alive() && t.Serves(*d) {
			add(t)
		}
	}
	if len(out) == 0 {
		if err := errors.Join(errs...); err != nil {
			return nil, nil, fmt.Errorf("%s: profile = True: %w", name, err)
		}
		return nil, nil, fmt.Errorf("%s: profile = True: no target to sample: the run's traffic reaches no target benchbook started "+
			"(backend.process, backend.container, backend.postgres(), backend.demo) and observe lists none; give profile = [handle or pid, ...]", name)
	}
	var warnings []string
	for _, err := range errs {
		warnings = append(warnings, "not sampled: "+err.Error())
	}
	return out, warnings, nil
}

// unwatched is the target a .watch(...) wraps, or v.
func unwatched(v any) any {
	if w, ok := v.(interface{ Watches() any }); ok {
		return w.Watches()
	}
	return v
}

func explicitTarget(v starlark.Value) (profTarget, error) {
	if h, ok := unwatched(v).(handle.Profiled); ok {
		t, err := h.ProfileTarget()
		return profTarget{t: t, key: h}, err
	}
	if n, ok := v.(starlark.Int); ok {
		pid, ok := n.Int64()
		if !ok || pid <= 0 {
			return profTarget{}, fmt.Errorf("pid must be > 0, got %s", v)
		}
		return profTarget{t: profile.Target{Name: fmt.Sprintf("pid %d", pid), Lister: profile.ProcessTree(int(pid))}, key: pid}, nil
	}
	return profTarget{}, fmt.Errorf("a %s cannot be profiled: give a process, container, postgres or demo handle, or a pid", v.Type())
}

func addTarget(ts []profTarget, t profTarget) []profTarget {
	for _, x := range ts {
		if x.key == t.key {
			return ts
		}
	}
	return append(ts, t)
}

// execTarget is what workload.exec samples with profile = True: the
// commands it runs, each a fork of this process, which perf follows from
// the fork (this process's own samples dropped).
func execTarget(argv []string) profTarget {
	self := os.Getpid()
	return profTarget{key: "exec", t: profile.Target{Name: "command " + filepath.Base(argv[0]),
		Lister: profile.PIDs(self), Keep: func(pid int) bool { return pid != self }}}
}

// profiler samples a run's targets over its measured window. Its methods
// are no-ops on a nil profiler (a run without profile).
type profiler struct {
	name    string // the builtin, for errors
	targets []profTarget
	recs    []*profile.PerfRecording
	cancel  context.CancelFunc
	notes   []string // targets left out, for the profile's warnings
}

// startProfiler starts perf on every target, armed: sampling stays off
// until the window opens.
func startProfiler(ctx context.Context, name string, targets []profTarget, hz int) (*profiler, error) {
	ctx, cancel := context.WithCancel(ctx)
	p := &profiler{name: name, targets: targets, cancel: cancel, recs: make([]*profile.PerfRecording, len(targets))}
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			p.recs[i], errs[i] = profile.StartPerf(ctx, t.t, profile.PerfOptions{Armed: true, Hz: hz})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		p.abort()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// start is profile's part of a builtin: the targets resolved and perf
// started, or nil when profile is off.
func (p profileArg) start(name string, th *starlark.Thread, observe *starlark.List, d *guard.Dest) (*profiler, error) {
	if err := p.check(name); err != nil || !p.on {
		return nil, err
	}
	ts, notes, err := p.targets(name, th, observe, d)
	if err != nil {
		return nil, err
	}
	prof, err := startProfiler(runtime.Context(th), name, ts, p.hz)
	if prof != nil {
		prof.notes = notes
	}
	return prof, err
}

// Type names the profiler in an observer's warning.
func (p *profiler) Type() string { return "profile" }

// StartObserving opens the window: what loadgen calls when the
// measurement starts (the profiler is the first observer).
func (p *profiler) StartObserving(context.Context) (func(int64) (map[string]float64, error), error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	return func(int64) (map[string]float64, error) { p.close(); return nil, nil }, nil
}

// observing puts the profiler first among the run's observers: its
// window opens before any other observer starts and closes before any
// other stops.
func (p *profiler) observing(obs []loadgen.Observer) []loadgen.Observer {
	if p == nil {
		return obs
	}
	return append([]loadgen.Observer{p}, obs...)
}

func (p *profiler) open() error {
	if p == nil {
		return nil
	}
	for _, r := range p.recs {
		if err := r.Enable(); err != nil {
			return err
		}
	}
	return nil
}

func (p *profiler) close() {
	if p == nil {
		return
	}
	for _, r := range p.recs {
		r.Disable()
	}
}

// abort ends every perf, keeping nothing: a run that failed or was
// interrupted.
func (p *profiler) abort() {
	if p == nil {
		return
	}
	p.cancel()
	for _, r := range p.recs {
		if r != nil {
			_, _ = r.Stop()
		}
	}
}

// attach folds what was sampled into the run's profile. An interrupted
// run gets none (it is not kept by any experiment) and says so; a window
// that never opened or a perf that failed is an error of the builtin,
// never a silent empty profile.
func (p *profiler) attach(r *Run) error {
	if p == nil {
		return nil
	}
	if r.d.Interrupted {
		p.abort()
		r.d.Warnings = append(r.d.Warnings, "profile: none, the run was interrupted")
		return nil
	}
	defer p.cancel()
	var ps []*profile.Profile
	var names []string
	for i, rec := range p.recs {
		prof, err := rec.Stop()
		if err != nil {
			p.abort()
			return fmt.Errorf("%s: %w", p.name, err)
		}
		ps = append(ps, prof)
		names = append(names, p.targets[i].t.Name)
	}
	one := ps[0]
	if len(ps) > 1 {
		rooted := make([]*profile.Profile, len(ps))
		for i, x := range ps {
			rooted[i] = x.WithRoot(names[i])
		}
		one = profile.Merge(rooted...)
		one.Window = ps[0].Window // one window, sampled in each target
	}
	one.Warnings = append(one.Warnings, p.notes...)
	data, err := starprofile.FromProfile(one, names, r.d.Count)
	if err != nil {
		return fmt.Errorf("%s: profile: %w", p.name, err)
	}
	r.d.Profile = data
	return nil
}

// profileValue is run.profile: None for a run without one.
func (r *Run) profileValue() (starlark.Value, error) {
	if r.d.Profile == nil {
		return starlark.None, nil
	}
	v, err := starprofile.New(r.d.Profile)
	if err != nil {
		return nil, fmt.Errorf("run.profile: %w", err)
	}
	return v, nil
}

// profileLine is the profile in one line under the run's table, "" for
// a run without one.
func (r *Run) profileLine() string {
	v, err := r.profileValue()
	if err != nil {
		return "profile: " + err.Error()
	}
	if v == starlark.None {
		return ""
	}
	return v.String()
}

// profiled runs a fleet run (run) with the profiler among the
// coordinator's observers, which open and close with the fleet's window.
func profiled(th *starlark.Thread, name string, la *loadArgs, spec *loadgen.Spec, d *guard.Dest, run func() (starlark.Value, error)) (starlark.Value, error) {
	prof, err := la.profile.start(name, th, la.observe, d)
	if err != nil {
		return nil, err
	}
	spec.Observers = prof.observing(spec.Observers)
	v, err := run()
	if err != nil {
		prof.abort()
		return nil, err
	}
	r, ok := v.(*Run)
	if !ok {
		prof.abort()
		return v, nil
	}
	return r, prof.attach(r)
}

// startProfile is workload.exec's profiler: with profile = True the
// command it runs, else the targets given.
func (a *execArgs) startProfile(name string, th *starlark.Thread, argv []string) (*profiler, error) {
	if err := a.profile.check(name); err != nil || !a.profile.on {
		return nil, err
	}
	if a.profile.explicit != nil {
		return a.profile.start(name, th, a.observe, nil)
	}
	return startProfiler(runtime.Context(th), name, []profTarget{execTarget(argv)}, a.profile.hz)
}
