package process

import (
	"fmt"
	"path/filepath"

	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/profile"
)

var _ handle.Profiled = (*Handle)(nil)

// ProfileTarget is the process and every process it starts.
func (p *Handle) ProfileTarget() (profile.Target, error) {
	name := "process " + filepath.Base(p.spec.argv[0])
	pid := p.pid()
	if pid == 0 {
		return profile.Target{}, fmt.Errorf("%s is not running", name)
	}
	return profile.Target{Name: name, Lister: profile.ProcessTree(pid)}, nil
}
