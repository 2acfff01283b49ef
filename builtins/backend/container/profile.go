package container

import (
	"fmt"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/profile"
)

var _ handle.Profiled = (*Handle)(nil)

// ProfileTarget is every process of the container's cgroup: its init's
// tree, and a command run in it with docker exec, which is not.
func (h *Handle) ProfileTarget() (profile.Target, error) {
	name := "container " + h.spec.Image
	pid := h.pid()
	if pid == 0 {
		return profile.Target{}, fmt.Errorf("%s is not running", name)
	}
	g, err := cgroup.FromPid(pid)
	if err != nil {
		return profile.Target{}, fmt.Errorf("%s: %w", name, err)
	}
	dir := g.ProcsDir()
	if dir == "" {
		return profile.Target{Name: name, Lister: profile.ProcessTree(pid)}, nil
	}
	return profile.Target{Name: name, Lister: profile.CgroupProcs(dir)}, nil
}
