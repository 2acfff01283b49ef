package backend

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/redact"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// containerHandle is the value of backend.container(...): one container
// of an image, started through the engine's API (builtins/internal/docker),
// with host networking, limits, its output in a ring of lines, removed when
// benchbook ends (or by the reaper, after a SIGKILL of benchbook).
type containerHandle struct {
	eng          *docker.Engine
	spec         docker.Spec
	ready        string
	readyTimeout time.Duration

	mu       sync.Mutex
	c        *docker.Container
	log      *logRing
	quitLogs context.CancelFunc
	stopping bool // benchbook stopped it: its end is "stopped", not "exited"
}

var _ starlark.HasAttrs = (*containerHandle)(nil)

// containerBuiltin is backend.container(image, cmd=[], env={}, cpus=None,
// memory=None, cpuset=None, pids=None, ready=None, ready_timeout="60s",
// volumes={}, name=None, user=None, network="host", restart="no").
func containerBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h, err := newContainer(th, b.Name(), args, kwargs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return h, nil
}

func newContainer(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (*containerHandle, error) {
	var image, ready, cname, user, restart string
	network := "host"
	var cmd starlark.Value = starlark.NewList(nil)
	var env, volumes *starlark.Dict
	timeout := starval.Duration(60 * time.Second)
	var lim limitArgs
	pairs := append([]any{"image", &image, "cmd?", &cmd, "env?", &env}, lim.pairs()...)
	pairs = append(pairs, "ready?", &ready, "ready_timeout?", &timeout, "volumes?", &volumes, "name?", &cname, "user?", &user, "network?", &network, "restart?", &restart)
	if err := starlark.UnpackArgs(name, args, kwargs, pairs...); err != nil {
		return nil, err
	}
	spec, err := containerSpec(th, image, cmd, env, volumes)
	if err != nil {
		return nil, err
	}
	if spec.Limits, err = lim.limits(); err != nil {
		return nil, err
	}
	if err := checkReady(ready); err != nil {
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
	h := &containerHandle{eng: eng, spec: spec, ready: ready, readyTimeout: time.Duration(timeout)}
	if err := h.start(ctx); err != nil {
		eng.Close()
		return nil, err
	}
	runtime.AtExit(th, func() { h.remove(); eng.Close() })
	if c := h.current(); c != nil {
		addImageInput(th, spec.Image, c.Digest)
	}
	runtime.AddInput(th, runtime.Input{Kind: "server", Name: h.describe()})
	addTarget(th, h)
	return h, nil
}

// containerSpec reads image, cmd, env and volumes.
func containerSpec(th *starlark.Thread, image string, cmd starlark.Value, env, volumes *starlark.Dict) (docker.Spec, error) {
	s := docker.Spec{Image: image}
	if strings.TrimSpace(image) == "" {
		return s, errors.New("image: empty")
	}
	if l, ok := cmd.(*starlark.List); !ok || l.Len() > 0 {
		argv, err := argv(cmd)
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
func (h *containerHandle) start(ctx context.Context) error {
	c, err := h.eng.Run(ctx, h.spec)
	if err != nil {
		return err
	}
	log := newLogRing(2000)
	lctx, quit := context.WithCancel(context.WithoutCancel(ctx))
	go func() { _ = h.eng.FollowLogs(lctx, c.ID, log) }()
	h.mu.Lock()
	h.c, h.log, h.quitLogs, h.stopping = c, log, quit, false
	h.mu.Unlock()
	if err := h.waitReady(ctx, c, log); err != nil {
		h.remove()
		return fmt.Errorf("%s: %w\nlast lines of its output:\n%s", h.spec.Image, err, indent(log.tail(20)))
	}
	return nil
}

func (h *containerHandle) waitReady(ctx context.Context, c *docker.Container, log *logRing) error {
	deadline := time.After(h.readyTimeout)
	check := func() bool { return true }
	if h.ready != "" {
		check = readyCheck(h.ready, log)
	}
	for {
		if st, err := h.eng.Inspect(ctx, c.ID); err != nil || !st.Running {
			if err == nil {
				st = h.eng.Settle(ctx, c.ID, st)
			}
			return fmt.Errorf("exited before it was ready (%s)", exitEvidence(st, err, h.spec.Limits))
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

// exitEvidence says how a container ended, naming the OOM kill the engine
// recorded.
func exitEvidence(st docker.State, err error, l cgroup.Limits) string {
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
	}
	return fmt.Sprintf("%s, exit code %d", st.Status, st.ExitCode)
}

// remove kills and removes the container (the AtExit hook; .stop()).
func (h *containerHandle) remove() {
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
func (h *containerHandle) current() *docker.Container {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

// describe is the provenance line: image, digest, limits, engine; nothing
// that differs from one start to the next (the container's name), since a
// live cell's inputs are part of its dependents' keys.
func (h *containerHandle) describe() string {
	c := h.current()
	if c == nil {
		return "container " + h.spec.Image + " (removed)"
	}
	s := fmt.Sprintf("container: image %s %s", c.Image, c.Digest) // no name: inputs key the cells downstream
	if !h.spec.Limits.Zero() {
		s += "; " + h.spec.Limits.String()
	}
	return s + "; network " + h.spec.Network + "; " + h.eng.Describe()
}

func (h *containerHandle) String() string {
	if c := h.current(); c != nil {
		return fmt.Sprintf("<container %s %s>", c.Name, c.Image)
	}
	return fmt.Sprintf("<container %s removed>", h.spec.Image)
}
func (h *containerHandle) Type() string          { return "container" }
func (h *containerHandle) Freeze()               {}
func (h *containerHandle) Truth() starlark.Bool  { return true }
func (h *containerHandle) Hash() (uint32, error) { return 0, errors.New("unhashable type: container") }

var containerMethods = methods[*containerHandle]{
	"logs":    (*containerHandle).logs,
	"stop":    (*containerHandle).stopMethod,
	"restart": (*containerHandle).restart,
	"watch": func(h *containerHandle, _ *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		return watchMethod(h, name, args, kwargs)
	},
}

func (h *containerHandle) AttrNames() []string {
	return containerMethods.names("digest", "engine", "id", "image", "limits", "name", "pid", "url")
}

func (h *containerHandle) Attr(name string) (starlark.Value, error) {
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
		return h.url(), nil
	}
	return containerMethods.bind(h, "container", name), nil
}

// pid is the container's init on the host, 0 when it does not run.
func (h *containerHandle) pid() int {
	c := h.current()
	if c == nil {
		return 0
	}
	return runningPid(h.eng, c.ID)
}

// runningPid is the host pid of container id's init, 0 when it does not
// run or the engine does not answer within 10 s.
func runningPid(eng *docker.Engine, id string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := eng.Inspect(ctx, id)
	if err != nil || !st.Running {
		return 0
	}
	return st.Pid
}

// url is the scheme and host of an HTTP ready check, as for a process.
func (h *containerHandle) url() starlark.Value {
	u, err := url.Parse(h.ready)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return starlark.None
	}
	return starlark.String(u.Scheme + "://" + u.Host)
}

func (h *containerHandle) logs(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	tail := 50
	if err := starlark.UnpackArgs(name, args, kwargs, "tail?", &tail); err != nil {
		return nil, err
	}
	h.mu.Lock()
	log := h.log
	h.mu.Unlock()
	return starlark.String(strings.Join(log.tail(tail), "\n")), nil
}

func (h *containerHandle) stopMethod(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	h.remove()
	return starlark.None, nil
}

// restart removes the container and starts a new one of the same spec.
func (h *containerHandle) restart(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
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
func (h *containerHandle) StartObserving(ctx context.Context) (func(requests int64) (map[string]float64, error), error) {
	pid := h.pid()
	if pid == 0 {
		return nil, errors.New("container: observe: not running")
	}
	g, err := cgroup.FromPid(pid)
	if err != nil {
		return nil, fmt.Errorf("container: observe: %w", err)
	}
	stop, err := cgroup.Observe(ctx, g)
	if err != nil {
		return nil, fmt.Errorf("container: observe: %w", err)
	}
	return func(requests int64) (map[string]float64, error) { return stop(requests), nil }, nil
}

func init() {
	runtime.RegisterInputKind("image", currentImage)
}

// addImageInput records the image a cell started, by its content id: a tag
// moved to another build since makes the entry stale (currentImage), so a
// record is never built from the figures of the image the tag left.
func addImageInput(th *starlark.Thread, ref, digest string) {
	runtime.AddInput(th, runtime.Input{Kind: "image", Name: ref, Hash: digest})
}

// currentImage is what ref names on the engine now.
func currentImage(ref string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eng, err := docker.Connect(ctx)
	if err != nil {
		return "", err
	}
	defer eng.Close()
	return eng.ImageDigest(ctx, ref)
}
