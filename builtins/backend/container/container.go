// Package container runs a container of an image: backend.container(image).
//
// The container starts through the Docker Engine API (builtins/internal/
// docker) with host networking and the limits asked for; its output goes
// to a ring of lines, and it is removed when benchbook ends (or by the
// reaper, after a SIGKILL of benchbook). It is a guarded, observed, logged
// target of every measured run.
package container

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/procfs"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Handle is the value of backend.container(...): one container of an image.
type Handle struct {
	eng          *docker.Engine
	spec         docker.Spec
	ready        string
	readyTimeout time.Duration

	// from says what the image was made of when benchbook made it (a
	// binary from build()); programs are cmd's binaries bound in.
	from     string
	programs []string

	mu       sync.Mutex
	c        *docker.Container
	log      *kit.LogRing
	quitLogs context.CancelFunc
	stopping bool          // benchbook stopped it: its end is "stopped", not "exited"
	sockets  guard.Sockets // ports its processes were seen listening on (Serves)
}

var (
	_ handle.Observer = (*Handle)(nil)
	_ handle.Logged   = (*Handle)(nil)
	_ handle.Preparer = (*Handle)(nil)
)

// Kind is backend.container(image, cmd=[], env={}, cpus=None,
// memory=None, cpuset=None, pids=None, ready=None, ready_timeout="60s",
// volumes={}, name=None, user=None, network="host", restart="no"). image
// is an image on the engine, or a static binary from build(), which then
// runs in an image of its own (program.go); a binary in cmd is bound into
// the container and run there.
var Kind = handle.Kind{
	Name:    "container",
	Builtin: starlark.NewBuiltin("backend.container", builtin),
	Inputs:  map[string]runtime.InputChecker{"image": kit.CurrentImage},
}

func builtin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h, err := newContainer(th, b.Name(), args, kwargs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return h, nil
}

func newContainer(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (*Handle, error) {
	var ready, cname, user, restart string
	network := "host"
	var image starlark.Value
	var cmd starlark.Value = starlark.NewList(nil)
	var env, volumes *starlark.Dict
	timeout := starval.Duration(60 * time.Second)
	var lim kit.LimitArgs
	pairs := append([]any{"image", &image, "cmd?", &cmd, "env?", &env}, lim.Pairs()...)
	pairs = append(pairs, "ready?", &ready, "ready_timeout?", &timeout, "volumes?", &volumes, "name?", &cname, "user?", &user, "network?", &network, "restart?", &restart)
	if err := starlark.UnpackArgs(name, args, kwargs, pairs...); err != nil {
		return nil, err
	}
	bin, isBin := image.(handle.Executable)
	ref, isRef := starlark.AsString(image)
	if !isBin && !isRef {
		return nil, fmt.Errorf("image must be an image's name or a binary from build(), got %s", image.Type())
	}
	if isBin {
		ref = "(made from " + bin.Path() + ")" // named once the engine has it
	}
	spec, err := containerSpec(th, ref, cmd, env, volumes)
	if err != nil {
		return nil, err
	}
	progs := programs(cmd, &spec)
	if spec.Limits, err = lim.Limits(); err != nil {
		return nil, err
	}
	if err := kit.CheckReady(ready); err != nil {
		return nil, err
	}
	switch restart {
	case "", "no", "on-failure", "always", "unless-stopped":
	default:
		return nil, fmt.Errorf(`restart: want "no", "on-failure", "always" or "unless-stopped", got %q`, restart)
	}
	spec.Name, spec.User, spec.Network, spec.Restart = cname, user, network, restart
	ctx := runtime.Context(th)
	eng, err := docker.Connect(ctx)
	if err != nil {
		return nil, err
	}
	h := &Handle{eng: eng, spec: spec, ready: ready, readyTimeout: time.Duration(timeout), programs: progs}
	if isBin {
		if h.spec.Image, err = binaryImage(ctx, eng, bin); err != nil {
			eng.Close()
			return nil, err
		}
		h.from = "made by benchbook of the binary " + bin.Path()
		if d, ok := bin.(describer); ok {
			h.from = "made by benchbook of the binary " + d.Describe()
		}
	}
	if err := h.start(ctx); err != nil {
		eng.Close()
		return nil, err
	}
	runtime.AtExit(th, h.Close)
	if c := h.current(); c != nil {
		kit.AddImageInput(th, spec.Image, c.Digest)
	}
	runtime.AddInput(th, runtime.Input{Kind: "server", Name: h.describe()})
	kit.AddTarget(th, h)
	return h, nil
}

// containerSpec reads image, cmd, env and volumes.
func containerSpec(th *starlark.Thread, image string, cmd starlark.Value, env, volumes *starlark.Dict) (docker.Spec, error) {
	s := docker.Spec{Image: image}
	if strings.TrimSpace(image) == "" {
		return s, errors.New("image: empty")
	}
	if l, ok := cmd.(*starlark.List); !ok || l.Len() > 0 {
		argv, err := kit.Argv(cmd)
		if err != nil {
			return s, err
		}
		s.Cmd = argv
	}
	kv, err := stringDict(env, "env")
	if err != nil {
		return s, err
	}
	for k, v := range kv {
		redact.Learn(k, v) // an image may print its own secrets to the logs a record shows
		s.Env = append(s.Env, k+"="+v)
	}
	sort.Strings(s.Env)
	vols, err := stringDict(volumes, "volumes")
	if err != nil {
		return s, err
	}
	s.Volumes = map[string]string{}
	for from, to := range vols {
		if !strings.HasPrefix(to, "/") {
			return s, fmt.Errorf("volumes: the path in the container must be absolute, got %q", to)
		}
		s.Volumes[runtime.Path(th, from)] = to
	}
	return s, nil
}

// stringDict reads a dict of strings to strings (None or absent: empty).
func stringDict(d *starlark.Dict, what string) (map[string]string, error) {
	out := map[string]string{}
	if d == nil {
		return out, nil
	}
	for _, kv := range d.Items() {
		k, ok1 := starlark.AsString(kv[0])
		v, ok2 := starlark.AsString(kv[1])
		if !ok1 || !ok2 || k == "" {
			return nil, fmt.Errorf("%s: want strings to strings, got %s: %s", what, kv[0].Type(), kv[1].Type())
		}
		out[k] = v
	}
	return out, nil
}

// start runs the container, follows its output and waits until it is
// ready; on failure it is removed and the error carries its last lines.
func (h *Handle) start(ctx context.Context) error {
	if err := kit.ReadyBeforeStart(h.ready); err != nil {
		return err
	}
	c, err := h.eng.Run(ctx, h.spec)
	if err != nil {
		return fmt.Errorf("%w%s", err, startHint(h.programs))
	}
	log := kit.NewLogRing(2000)
	lctx, quit := context.WithCancel(context.WithoutCancel(ctx))
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		_ = h.eng.FollowLogs(lctx, c.ID, log)
	}()
	h.mu.Lock()
	h.c, h.log, h.quitLogs, h.stopping = c, log, quit, false
	h.mu.Unlock()
	if err := h.waitReady(ctx, c, log); err != nil {
		if errors.Is(err, errExitedEarly) {
			// It has printed all it will, but the engine's log stream can
			// lag its exit: "address already in use" was missing from the
			// error once. The stream ends with the container; wait for it.
			select {
			case <-followed:
			case <-time.After(2 * time.Second):
			}
		}
		h.remove()
		return fmt.Errorf("%s: %w\nlast lines of its output:\n%s%s", h.spec.Image, err, kit.Indent(log.Tail(20)), startHint(h.programs))
	}
	h.sockets.Note(procfs.TreePids(h.pid()))
	return nil
}

// errExitedEarly is waitReady's error for a container that stopped first.
var errExitedEarly = errors.New("exited before it was ready")

func (h *Handle) waitReady(ctx context.Context, c *docker.Container, log *kit.LogRing) error {
	deadline := time.After(h.readyTimeout)
	check := func() bool { return true }
	if h.ready != "" {
		check = kit.ReadyCheck(h.ready, log)
	}
	for {
		if st, err := h.eng.Inspect(ctx, c.ID); err != nil || !st.Running {
			if err == nil {
				st = h.eng.Settle(ctx, c.ID, st)
			}
			return fmt.Errorf("%w (%s)", errExitedEarly, kit.ExitEvidence(st, err, h.spec.Limits))
		}
		if check() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("not ready (%s) after %s", h.ready, h.readyTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close removes the container and closes the engine's client (the AtExit
// hook).
func (h *Handle) Close() {
	h.remove()
	h.eng.Close()
}

// remove kills and removes the container (.stop(), .restart()).
func (h *Handle) remove() {
	h.mu.Lock()
	c, quit := h.c, h.quitLogs
	h.c, h.stopping = nil, true
	h.mu.Unlock()
	if c != nil {
		_ = h.eng.Remove(context.Background(), c.ID)
	}
	if quit != nil {
		quit()
	}
}

// current is the running container, or nil.
func (h *Handle) current() *docker.Container {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

// describe is the provenance line: image, digest, limits, engine; nothing
// that differs from one start to the next (the container's name), since a
// live cell's inputs are part of its dependents' keys.
func (h *Handle) describe() string {
	c := h.current()
	if c == nil {
		return "container " + h.spec.Image + " (removed)"
	}
	s := fmt.Sprintf("container: image %s %s", c.Image, c.Digest) // no name: inputs key the cells downstream
	if h.from != "" {
		s += " (" + h.from + ")"
	}
	if argv := append(append([]string(nil), h.spec.Entry...), h.spec.Cmd...); len(argv) > 0 {
		redact.LearnArgs(argv)
		s += "; runs " + redact.String(strings.Join(argv, " ")) // a password flag's value stays out of the record
	}
	if h.ready != "" {
		s += "; ready " + h.ready
	}
	if !h.spec.Limits.Zero() {
		s += "; " + h.spec.Limits.String()
	}
	return s + "; network " + h.spec.Network + "; " + h.eng.Describe()
}

func (h *Handle) String() string {
	if c := h.current(); c != nil {
		return fmt.Sprintf("<container %s %s>", c.Name, c.Image)
	}
	return fmt.Sprintf("<container %s removed>", h.spec.Image)
}
func (h *Handle) Type() string          { return "container" }
func (h *Handle) Freeze()               {}
func (h *Handle) Truth() starlark.Bool  { return true }
func (h *Handle) Hash() (uint32, error) { return 0, errors.New("unhashable type: container") }

var containerMethods = kit.Methods[*Handle]{
	"logs":    (*Handle).logs,
	"stop":    (*Handle).stopMethod,
	"restart": (*Handle).restart,
	"watch": func(h *Handle, _ *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		return kit.WatchMethod(h, name, args, kwargs)
	},
}

func (h *Handle) AttrNames() []string {
	return containerMethods.Names("digest", "engine", "id", "image", "limits", "name", "pid", "url")
}

func (h *Handle) Attr(name string) (starlark.Value, error) {
	c := h.current()
	str := func(f func(*docker.Container) string) starlark.Value {
		if c == nil {
			return starlark.None
		}
		return starlark.String(f(c))
	}
	switch name {
	case "id":
		return str(func(c *docker.Container) string { return c.ID }), nil
	case "name":
		return str(func(c *docker.Container) string { return c.Name }), nil
	case "digest":
		return str(func(c *docker.Container) string { return c.Digest }), nil
	case "image":
		return starlark.String(h.spec.Image), nil
	case "limits":
		return starlark.String(h.spec.Limits.String()), nil
	case "engine":
		return starlark.String(h.eng.Describe()), nil
	case "pid":
		if pid := h.pid(); pid > 0 {
			return starlark.MakeInt(pid), nil
		}
		return starlark.None, nil
	case "url":
		return kit.ReadyURL(h.ready), nil
	}
	return containerMethods.Bind(h, "container", name), nil
}

// pid is the container's init on the host, 0 when it does not run.
func (h *Handle) pid() int {
	c := h.current()
	if c == nil {
		return 0
	}
	return kit.RunningPid(h.eng, c.ID)
}

func (h *Handle) logs(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	tail := 50
	if err := starlark.UnpackArgs(name, args, kwargs, "tail?", &tail); err != nil {
		return nil, err
	}
	h.mu.Lock()
	log := h.log
	h.mu.Unlock()
	return starlark.String(strings.Join(log.Tail(tail), "\n")), nil
}

func (h *Handle) stopMethod(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	h.remove()
	return starlark.None, nil
}

// restart removes the container and starts a new one of the same spec.
func (h *Handle) restart(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	h.remove()
	if err := h.start(runtime.Context(th)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return starlark.None, nil
}

// StartObserving opens a window on the container's cgroup (found from its
// init's pid): server_cpu_cores, mem_anon_kb, mem_cache_kb,
// mem_high_water_kb, io_read_bytes, ... as cgroup.Observe gives them.
func (h *Handle) StartObserving(ctx context.Context) (handle.Stop, error) {
	open, _, err := h.PrepareObserving(ctx)
	if err != nil {
		return nil, err
	}
	return open()
}

// PrepareObserving finds the container's cgroup before the window
// (handle.Preparer): its init's pid is the engine's answer, which under
// load came after a 1 s window had passed. Opening the window is then the
// cgroup's first reading alone.
func (h *Handle) PrepareObserving(ctx context.Context) (open func() (handle.Stop, error), cancel func(), err error) {
	pid := h.pid()
	if pid == 0 {
		return nil, nil, errors.New("container: observe: not running")
	}
	g, err := cgroup.FromPid(pid)
	if err != nil {
		return nil, nil, fmt.Errorf("container: observe: %w", err)
	}
	open = func() (handle.Stop, error) {
		stop, err := cgroup.Observe(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("container: observe: %w", err)
		}
		return func(requests int64) (map[string]float64, error) { return stop(requests), nil }, nil
	}
	return open, func() {}, nil
}
