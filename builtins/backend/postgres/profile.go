package postgres

import (
	"errors"

	"github.com/benchbook/benchbook/builtins/backend/handle"
	"github.com/benchbook/benchbook/builtins/internal/profile"
)

var _ handle.Profiled = (*Handle)(nil)

// ProfileTarget is the cluster's postmaster and every process it forks:
// the backends of the run's connections (forked in the window, followed
// from their start), its workers and background processes.
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
	return profile.Target{Name: "postgres", Lister: profile.ProcessTree(pid)}, nil
}
