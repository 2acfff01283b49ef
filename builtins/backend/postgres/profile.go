package postgres

import (
	"errors"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/profile"
)

var _ handle.Profiled = (*Handle)(nil)

// ProfileTarget is the cluster's postmaster and every process it forks:
// the backends of the run's connections (forked in the window, followed
// from their start), its workers and background processes; not the
// backends of benchbook's own monitoring connections.
func (h *Handle) ProfileTarget() (profile.Target, error) {
	pid := h.postmasterPID()
	if pid == 0 {
		h.mu.Lock()
		attached := h.c == nil
		h.mu.Unlock()
		if attached {
			return profile.Target{}, errors.New("postgres reached by dsn: benchbook does not know its processes (give its postmaster's pid: profile = [pid])")
		}
		return profile.Target{}, errors.New("postgres is not running")
	}
	return profile.Target{Name: "postgres", Lister: profile.ProcessTree(pid), Keep: h.notOwn}, nil
}

// notOwn is false for the backends of benchbook's own connections to the
// cluster (its observer's, its guard's): their work (a fork, a catalog
// cache filled, pg_stat_activity read five times a second) is not the
// workload's, and divided by the few requests of a slow arm it would
// show as CPU per request.
func (h *Handle) notOwn(pid int) bool {
	_, own := h.ownConns.Load(pid)
	return !own
}
