package demo

import (
	"errors"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/profile"
)

var _ handle.Profiled = (*Handle)(nil)

// ProfileTarget is the demo's process. The demo runs as a child process
// (benchbook re-executed as "benchbook __demo"), not inside benchbook, so
// sampling it never samples the load generator.
func (h *Handle) ProfileTarget() (profile.Target, error) {
	if !h.Alive() {
		return profile.Target{}, errors.New("the demo is not running")
	}
	return profile.Target{Name: "demo", Lister: profile.ProcessTree(h.cmd.Process.Pid)}, nil
}
