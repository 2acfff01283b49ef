package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/procfs"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/redact"
)

// procSpec is everything needed to (re)start a target process.
type procSpec struct {
	argv         []string
	env          []string
	dir          string
	ready        string
	readyTimeout time.Duration
	limits       cgroup.Limits // cpus, memory, cpuset, pids (limits.go)
}

// procHandle is the value of backend.process(...).
type procHandle struct {
	spec procSpec

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	log      *logRing
	stopping *atomic.Bool  // set when benchbook stops this cmd: its end is no guard trip
	group    *cgroup.Group // the cgroup holding the limits, nil without limits
}

var _ starlark.HasAttrs = (*procHandle)(nil)

// processBuiltin is backend.process(cmd, env={}, cwd=None, ready=None,
// ready_timeout="30s", cpus=None, memory=None, cpuset=None, pids=None).
func processBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cmd starlark.Value
	var env *starlark.Dict
	var cwd, ready string
	timeout := starval.Duration(30 * time.Second)
	var lim limitArgs
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, append([]any{"cmd", &cmd, "env?", &env, "cwd?", &cwd,
		"ready?", &ready, "ready_timeout?", &timeout}, lim.pairs()...)...); err != nil {
		return nil, err
	}
	spec, err := makeSpec(th, cmd, env, cwd, ready, timeout)
	if err == nil {
		spec.limits, err = lim.limits()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	// The binary it starts and the files it is given are inputs, hashed as
	// it starts: a replaced ./srvbin left the cells measuring it cached.
	for _, in := range runtime.CommandInputs(th, spec.argv, spec.dir) {
		runtime.AddInput(th, in)
	}
	p := &procHandle{spec: spec}
	if err := p.start(runtime.Context(th)); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	runtime.AtExit(th, func() { p.stop(5 * time.Second) })
	addLimitsInput(th, "process "+spec.argv[0], spec.limits)
	addTarget(th, p)
	return p, nil
}

func makeSpec(th *starlark.Thread, cmd starlark.Value, env *starlark.Dict, cwd, ready string, timeout starval.Duration) (procSpec, error) {
	s := procSpec{readyTimeout: time.Duration(timeout)}
	var err error
	if s.argv, err = argv(cmd); err != nil {
		return s, err
	}
	if err := checkReady(ready); err != nil {
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

// checkReady accepts "", "http://...", "tcp:PORT" and "log:REGEX".
func checkReady(ready string) error {
	if ready != "" && !strings.HasPrefix(ready, "http://") && !strings.HasPrefix(ready, "https://") &&
		!strings.HasPrefix(ready, "tcp:") && !strings.HasPrefix(ready, "log:") {
		return fmt.Errorf(`ready must be "http://...", "tcp:PORT" or "log:REGEX", got %q`, ready)
	}
	if rest, ok := strings.CutPrefix(ready, "log:"); ok {
		if _, err := regexp.Compile(rest); err != nil {
			return fmt.Errorf("ready: %w", err)
		}
	}
	return nil
}

// argv accepts a string (split at spaces), a binary from build(), or a list
// of strings and binaries.
func argv(cmd starlark.Value) ([]string, error) {
	switch c := cmd.(type) {
	case starlark.String:
		if f := strings.Fields(string(c)); len(f) > 0 {
			return f, nil
		}
		return nil, errors.New("cmd: empty")
	case *binaryValue:
		return []string{c.b.Path}, nil
	case starlark.Indexable:
		var out []string
		for i := 0; i < c.Len(); i++ {
			switch e := c.Index(i).(type) {
			case starlark.String:
				out = append(out, string(e))
			case *binaryValue:
				out = append(out, e.b.Path)
			default:
				return nil, fmt.Errorf("cmd: element %d must be a string or binary, got %s", i, e.Type())
			}
		}
		if len(out) == 0 {
			return nil, errors.New("cmd: empty")
		}
		return out, nil
	}
	return nil, fmt.Errorf("cmd must be a string, a binary or a list, got %s", cmd.Type())
}

// start runs the process and waits until it is ready.
func (p *procHandle) start(ctx context.Context) error {
	cmd := exec.Command(p.spec.argv[0], p.spec.argv[1:]...)
	cmd.Env, cmd.Dir = p.spec.env, p.spec.dir
	log := newLogRing(2000)
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
		if group, err = limitPid(cmd.Process.Pid, p.spec.limits); err != nil {
			stopChild(cmd.Process.Pid, syscall.SIGKILL, time.Second, done)
			return fmt.Errorf("limits (%s): %w", p.spec.limits, err)
		}
	}
	p.mu.Lock()
	p.cmd, p.done, p.log, p.stopping, p.group = cmd, done, log, new(atomic.Bool), group
	p.mu.Unlock()
	if err := p.waitReady(ctx, cmd, done, log); err != nil {
		stopChild(cmd.Process.Pid, syscall.SIGTERM, time.Second, done)
		return fmt.Errorf("%s: %w\nlast lines of its output:\n%s", p.spec.argv[0], err, indent(log.tail(20)))
	}
	return nil
}

func (p *procHandle) waitReady(ctx context.Context, cmd *exec.Cmd, done <-chan struct{}, log *logRing) error {
	if p.spec.ready == "" {
		return nil
	}
	deadline := time.After(p.spec.readyTimeout)
	check := readyCheck(p.spec.ready, log)
	for {
		wake := log.wait()
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

// readyCheck returns a probe for a ready spec.
func readyCheck(ready string, log *logRing) func() bool {
	client := &http.Client{Timeout: time.Second}
	switch {
	case strings.HasPrefix(ready, "tcp:"):
		addr := strings.TrimPrefix(ready, "tcp:")
		if !strings.Contains(addr, ":") {
			addr = "127.0.0.1:" + addr
		}
		return func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil
		}
	case strings.HasPrefix(ready, "log:"):
		re := regexp.MustCompile(strings.TrimPrefix(ready, "log:"))
		return func() bool {
			for _, l := range log.tail(0) {
				if re.MatchString(l) {
					return true
				}
			}
			return false
		}
	}
	return func() bool {
		resp, err := client.Get(ready)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode < 500
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after grace.
func (p *procHandle) stop(grace time.Duration) {
	p.mu.Lock()
	cmd, done, stopping, group := p.cmd, p.done, p.stopping, p.group
	p.cmd, p.group = nil, nil
	p.mu.Unlock()
	if cmd != nil {
		stopping.Store(true)
		stopChild(cmd.Process.Pid, syscall.SIGTERM, grace, done)
	}
	dropGroup(group)
}

func (p *procHandle) pid() int {
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

func (p *procHandle) String() string {
	return fmt.Sprintf("<process %s pid=%d>", strings.Join(p.spec.argv, " "), p.pid())
}
func (p *procHandle) Type() string          { return "process" }
func (p *procHandle) Freeze()               {}
func (p *procHandle) Truth() starlark.Bool  { return true }
func (p *procHandle) Hash() (uint32, error) { return 0, errors.New("unhashable type: process") }

var procMethods = methods[*procHandle]{
	"cpu":     (*procHandle).cpu,
	"rss":     (*procHandle).rss,
	"logs":    (*procHandle).logs,
	"restart": (*procHandle).restart,
	"stop":    (*procHandle).stopMethod,
	"watch": func(p *procHandle, _ *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		return watchMethod(p, name, args, kwargs)
	},
}

func (p *procHandle) AttrNames() []string {
	return procMethods.names("pid", "url")
}

func (p *procHandle) Attr(name string) (starlark.Value, error) {
	switch name {
	case "pid":
		if pid := p.pid(); pid > 0 {
			return starlark.MakeInt(pid), nil
		}
		return starlark.None, nil
	case "url":
		return p.url(), nil
	}
	return procMethods.bind(p, "process", name), nil
}

// url is the scheme and host of an HTTP ready check ("http://127.0.0.1:8080"
// for ready = "http://127.0.0.1:8080/health"), so a workload can aim at the
// process as it does at backend.demo; None for other ready checks.
func (p *procHandle) url() starlark.Value {
	u, err := url.Parse(p.spec.ready)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return starlark.None
	}
	return starlark.String(u.Scheme + "://" + u.Host)
}

// cpu is .cpu(): CPU seconds of the process and its descendants so far.
func (p *procHandle) cpu(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	cpu, _ := procfs.TreeUsage(p.pid())
	return starlark.Float(cpu.Seconds()), nil
}

// rss is .rss(): resident memory of the process tree, in kB.
func (p *procHandle) rss(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	_, kb := procfs.TreeUsage(p.pid())
	return starlark.MakeInt64(kb), nil
}

func (p *procHandle) logs(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	tail := 50
	if err := starlark.UnpackArgs(name, args, kwargs, "tail?", &tail); err != nil {
		return nil, err
	}
	p.mu.Lock()
	log := p.log
	p.mu.Unlock()
	return starlark.String(strings.Join(log.tail(tail), "\n")), nil
}

func (p *procHandle) restart(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	p.stop(5 * time.Second)
	if err := p.start(runtime.Context(th)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return starlark.None, nil
}

func (p *procHandle) stopMethod(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
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
func (p *procHandle) StartObserving(ctx context.Context) (func(requests int64) (map[string]float64, error), error) {
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
	return observeGroup(ctx, group, func(requests int64) (map[string]float64, error) {
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
