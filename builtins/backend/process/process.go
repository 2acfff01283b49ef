// Package process runs a target process for a notebook: backend.process(cmd).
//
// The process starts through child.Start (its own process group, dying
// with benchbook even on a SIGKILL of it), may wait for a ready check, runs
// under cgroup limits when asked, and is a guarded, observed, logged
// target of every measured run.
package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/procfs"
	"github.com/benchbook/benchbook/runtime/redact"
)

// procSpec is everything needed to (re)start a target process.
type procSpec struct {
	argv         []string
	env          []string
	dir          string
	ready        string
	readyTimeout time.Duration
	limits       cgroup.Limits // cpus, memory, cpuset, pids (kit.LimitArgs)
}

// Handle is the value of backend.process(...).
type Handle struct {
	spec procSpec

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	log      *kit.LogRing
	stopping *atomic.Bool  // set when benchbook stops this cmd: its end is no guard trip
	group    *cgroup.Group // the cgroup holding the limits, nil without limits
	sockets  guard.Sockets // ports its processes were seen listening on (Serves)
}

var (
	_ handle.Observer = (*Handle)(nil)
	_ handle.Logged   = (*Handle)(nil)
)

// Kind is backend.process(cmd, env={}, cwd=None, ready=None,
// ready_timeout="30s", cpus=None, memory=None, cpuset=None, pids=None).
var Kind = handle.Kind{Name: "process", Builtin: starlark.NewBuiltin("backend.process", builtin)}

func builtin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cmd starlark.Value
	var env *starlark.Dict
	var cwd, ready string
	timeout := starval.Duration(30 * time.Second)
	var lim kit.LimitArgs
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, append([]any{"cmd", &cmd, "env?", &env, "cwd?", &cwd,
		"ready?", &ready, "ready_timeout?", &timeout}, lim.Pairs()...)...); err != nil {
		return nil, err
	}
	spec, err := makeSpec(th, cmd, env, cwd, ready, timeout)
	if err == nil {
		spec.limits, err = lim.Limits()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	// The binary it starts and the files it is given are inputs, hashed as
	// it starts: a replaced ./srvbin left the cells measuring it cached.
	inputs := runtime.CommandInputs(th, spec.argv, spec.dir)
	for _, in := range inputs {
		runtime.AddInput(th, in)
	}
	p := &Handle{spec: spec}
	if err := p.start(runtime.Context(th)); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	runtime.AtExit(th, p.Close)
	runtime.AddInput(th, runtime.Input{Kind: "server", Name: describe(spec, cmd, inputs)})
	kit.AddTarget(th, p)
	return p, nil
}

// describe is the target's provenance line: what it runs (the command,
// the binary's hash, how a built binary was built), when it is ready, its
// limits. Nothing that differs from one start to the next: a live cell's
// inputs key the cells downstream.
func describe(spec procSpec, cmd starlark.Value, inputs []runtime.Input) string {
	redact.LearnArgs(spec.argv)
	s := "process: " + redact.String(strings.Join(spec.argv, " ")) // --requirepass PW: the record's targets table and the cache entry hide PW
	var about []string
	if d, ok := cmd.(interface{ Describe() string }); ok {
		about = append(about, "built: "+d.Describe())
	} else {
		for _, in := range inputs {
			if in.Kind == "binary" {
				about = append(about, fmt.Sprintf("%s sha256:%s", in.Name, in.Hash[:min(16, len(in.Hash))]))
				break
			}
		}
	}
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	if spec.ready != "" {
		s += "; ready " + spec.ready
	}
	if !spec.limits.Zero() {
		s += "; " + spec.limits.String()
	}
	return s
}

func makeSpec(th *starlark.Thread, cmd starlark.Value, env *starlark.Dict, cwd, ready string, timeout starval.Duration) (procSpec, error) {
	s := procSpec{readyTimeout: time.Duration(timeout)}
	var err error
	if s.argv, err = kit.Argv(cmd); err != nil {
		return s, err
	}
	if err := kit.CheckReady(ready); err != nil {
		return s, err
	}
	s.ready = ready
	if cwd != "" {
		s.dir = runtime.Path(th, cwd)
	}
	s.env = os.Environ()
	if env != nil {
		for _, kv := range env.Items() {
			k, ok1 := starlark.AsString(kv[0])
			v, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 {
				return s, fmt.Errorf("env: names and values must be strings, got %s=%s", kv[0].Type(), kv[1].Type())
			}
			redact.Learn(k, v) // a target may print its own secrets to the logs a record shows
			s.env = append(s.env, k+"="+v)
		}
	}
	return s, nil
}

// start runs the process and waits until it is ready.
func (p *Handle) start(ctx context.Context) error {
	if err := kit.ReadyBeforeStart(p.spec.ready); err != nil {
		return err
	}
	cmd := exec.Command(p.spec.argv[0], p.spec.argv[1:]...)
	cmd.Env, cmd.Dir = p.spec.env, p.spec.dir
	log := kit.NewLogRing(2000)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = time.Second
	if err := child.Start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", p.spec.argv[0], err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	var group *cgroup.Group
	if !p.spec.limits.Zero() {
		var err error
		if group, err = kit.LimitPid(cmd.Process.Pid, p.spec.limits); err != nil {
			kit.StopChild(cmd.Process.Pid, syscall.SIGKILL, time.Second, done)
			return fmt.Errorf("limits (%s): %w", p.spec.limits, err)
		}
	}
	p.mu.Lock()
	p.cmd, p.done, p.log, p.stopping, p.group = cmd, done, log, new(atomic.Bool), group
	p.mu.Unlock()
	if err := p.waitReady(ctx, cmd, done, log); err != nil {
		kit.StopChild(cmd.Process.Pid, syscall.SIGTERM, time.Second, done)
		return fmt.Errorf("%s: %w\nlast lines of its output:\n%s", p.spec.argv[0], err, kit.Indent(log.Tail(20)))
	}
	p.sockets.Note(procfs.TreePids(cmd.Process.Pid))
	return nil
}

func (p *Handle) waitReady(ctx context.Context, cmd *exec.Cmd, done <-chan struct{}, log *kit.LogRing) error {
	if p.spec.ready == "" {
		return nil
	}
	deadline := time.After(p.spec.readyTimeout)
	check := kit.ReadyCheck(p.spec.ready, log)
	for {
		wake := log.Wait()
		if check() {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("exited before it was ready (%s)", cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("not ready (%s) after %s", p.spec.ready, p.spec.readyTimeout)
		case <-wake:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the process (the AtExit hook): SIGTERM, then SIGKILL after 5 s.
func (p *Handle) Close() { p.stop(5 * time.Second) }

// stop ends the process group: SIGTERM, then SIGKILL after grace.
func (p *Handle) stop(grace time.Duration) {
	p.mu.Lock()
	cmd, done, stopping, group := p.cmd, p.done, p.stopping, p.group
	p.cmd, p.group = nil, nil
	p.mu.Unlock()
	if cmd != nil {
		stopping.Store(true)
		kit.StopChild(cmd.Process.Pid, syscall.SIGTERM, grace, done)
	}
	kit.DropGroup(group)
}

func (p *Handle) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

func (p *Handle) String() string {
	return fmt.Sprintf("<process %s pid=%d>", strings.Join(p.spec.argv, " "), p.pid())
}
func (p *Handle) Type() string          { return "process" }
func (p *Handle) Freeze()               {}
func (p *Handle) Truth() starlark.Bool  { return true }
func (p *Handle) Hash() (uint32, error) { return 0, errors.New("unhashable type: process") }

var procMethods = kit.Methods[*Handle]{
	"cpu":     (*Handle).cpu,
	"rss":     (*Handle).rss,
	"logs":    (*Handle).logs,
	"restart": (*Handle).restart,
	"stop":    (*Handle).stopMethod,
	"watch": func(p *Handle, _ *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		return kit.WatchMethod(p, name, args, kwargs)
	},
}

func (p *Handle) AttrNames() []string {
	return procMethods.Names("pid", "url")
}

func (p *Handle) Attr(name string) (starlark.Value, error) {
	switch name {
	case "pid":
		if pid := p.pid(); pid > 0 {
			return starlark.MakeInt(pid), nil
		}
		return starlark.None, nil
	case "url":
		return kit.ReadyURL(p.spec.ready), nil
	}
	return procMethods.Bind(p, "process", name), nil
}

// cpu is .cpu(): CPU seconds of the process and its descendants so far.
func (p *Handle) cpu(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	cpu, _ := procfs.TreeUsage(p.pid())
	return starlark.Float(cpu.Seconds()), nil
}

// rss is .rss(): resident memory of the process tree, in kB.
func (p *Handle) rss(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	_, kb := procfs.TreeUsage(p.pid())
	return starlark.MakeInt64(kb), nil
}

func (p *Handle) logs(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	tail := 50
	if err := starlark.UnpackArgs(name, args, kwargs, "tail?", &tail); err != nil {
		return nil, err
	}
	p.mu.Lock()
	log := p.log
	p.mu.Unlock()
	return starlark.String(strings.Join(log.Tail(tail), "\n")), nil
}

func (p *Handle) restart(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	p.stop(5 * time.Second)
	if err := p.start(runtime.Context(th)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return starlark.None, nil
}

func (p *Handle) stopMethod(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	grace := starval.Duration(5 * time.Second)
	if err := starlark.UnpackArgs(name, args, kwargs, "grace?", &grace); err != nil {
		return nil, err
	}
	p.stop(time.Duration(grace))
	return starlark.None, nil
}

// StartObserving begins a measurement window on the process; stop returns
// server_cpu_us_per_req (CPU of the process tree per request, µs),
// server_cpu_us (the window's total) and server_rss_peak_kb (the largest
// resident size sampled every 100 ms); a process with limits adds its
// cgroup's figures (server_cpu_cores, mem_anon_kb, ...: cgroup.Observe).
func (p *Handle) StartObserving(ctx context.Context) (handle.Stop, error) {
	pid := p.pid()
	if pid == 0 {
		return nil, errors.New("process: observe: not running")
	}
	cpu0, rss0 := procfs.TreeUsage(pid)
	peak := rss0
	stop := guard.Every(ctx, 100*time.Millisecond, func() {
		_, kb := procfs.TreeUsage(pid)
		peak = max(peak, kb)
	})
	p.mu.Lock()
	group := p.group
	p.mu.Unlock()
	return kit.ObserveGroup(ctx, group, func(requests int64) (map[string]float64, error) {
		stop()
		cpu1, rss1 := procfs.TreeUsage(pid)
		out := map[string]float64{
			"server_cpu_us":      float64(max(cpu1-cpu0, 0).Nanoseconds()) / 1e3,
			"server_rss_peak_kb": float64(max(peak, rss1)),
		}
		if requests > 0 {
			out["server_cpu_us_per_req"] = out["server_cpu_us"] / float64(requests)
		}
		return out, nil
	}), nil
}
