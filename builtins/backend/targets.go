package backend

import (
	"net/url"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/procfs"
	"github.com/benchbook/benchbook/runtime"
)

// Every process, container and cluster a notebook starts is a guard.Target:
// every measured run watches it, observed or not (see guard/targets.go),
// and the one the run sends traffic to is found by Serves.

var (
	_ guard.Target = (*procHandle)(nil)
	_ guard.Target = (*containerHandle)(nil)
	_ guard.Target = (*pgHandle)(nil)
)

// addTarget registers t with the session's run guards.
func addTarget(th *starlark.Thread, t guard.Target) {
	runtime.SessionValue(th, guard.TargetsKey, guard.NewTargets).Add(t)
}

// readyPort is the port a ready check names ("http://127.0.0.1:8080/x",
// "tcp:5432"), 0 for none.
func readyPort(ready string) int {
	if p, ok := strings.CutPrefix(ready, "tcp:"); ok {
		n, _ := strconv.Atoi(p)
		return n
	}
	u, err := url.Parse(ready)
	if err != nil || u.Host == "" {
		return 0
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	return map[string]int{"http": 80, "https": 443}[u.Scheme]
}

// Watched: a process benchbook did not stop on purpose.
func (p *procHandle) Watched() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !p.stopping.Load()
}

// Alive: its process runs.
func (p *procHandle) Alive() bool { return p.pid() != 0 }

// Serves: the port of its ready check, or one its process tree listens on.
func (p *procHandle) Serves(d guard.Dest) bool {
	if d.Target == starlark.Value(p) {
		return true
	}
	return d.LocalPort(readyPort(p.spec.ready)) || d.Port > 0 && guard.Local(d.Host) && guard.Listens(procfs.TreePids(p.pid()), d.Port)
}

// Watched: a container benchbook did not stop or remove.
func (h *containerHandle) Watched() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c != nil && !h.stopping
}

// Alive: the engine runs it.
func (h *containerHandle) Alive() bool { return h.pid() != 0 }

// Serves: the port of its ready check, or one its processes listen on (on
// the host's network, as by default).
func (h *containerHandle) Serves(d guard.Dest) bool {
	if d.Target == starlark.Value(h) {
		return true
	}
	return d.LocalPort(readyPort(h.ready)) || d.Port > 0 && guard.Local(d.Host) && guard.Listens(procfs.TreePids(h.pid()), d.Port)
}

// Watched: a cluster of the notebook's own that is not stopped.
func (h *pgHandle) Watched() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c != nil && h.pool != nil
}

// Alive: its postmaster (or its container) runs.
func (h *pgHandle) Alive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c != nil && h.c.running()
}

// Serves: the handle itself, its port on this machine, or its socket
// directory.
func (h *pgHandle) Serves(d guard.Dest) bool {
	if d.Target == starlark.Value(h) {
		return true
	}
	h.mu.Lock()
	c := h.c
	h.mu.Unlock()
	if c == nil {
		return false
	}
	return d.LocalPort(c.port) || d.Socket != "" && d.Socket == c.sockDir
}
