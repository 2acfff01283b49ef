package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Local starts agents as processes on this machine: the one-box fleet.
type Local struct {
	// Binary is the benchbook executable (default: this one).
	Binary string
	// CPUs pins agent i to CPUs[i%len(CPUs)] ("0", "2-3", "0,2"), as
	// taskset -c does; none: unpinned.
	CPUs []string
	noClose
}

// Launch starts one `benchbook agent` per spec.
func (l *Local) Launch(_ context.Context, specs []Spec) ([]*Agent, error) {
	bin := l.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("local agents: %w", err)
		}
	}
	var agents []*Agent
	for i := range specs {
		args := []string{"agent"}
		if len(l.CPUs) > 0 {
			args = append(args, "-cpus", l.CPUs[i%len(l.CPUs)])
		}
		a, err := startProc(fmt.Sprintf("local/%d", i), exec.Command(bin, args...), nil)
		if err != nil {
			killAgents(agents)
			return nil, fmt.Errorf("local agent %d: %w", i, err)
		}
		agents = append(agents, a)
	}
	return agents, nil
}
