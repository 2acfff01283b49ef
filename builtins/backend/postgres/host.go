package postgres

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// pgHost is the host side of a cluster: the host's PostgreSQL binaries run
// as the cluster's account, the postmaster in a process group that dies
// with benchbook. Its zero value is a host cluster that does not run.
type pgHost struct {
	cmd   *exec.Cmd     // the running postmaster, nil when stopped
	group *cgroup.Group // its limits group, nil without limits
}

// initdb runs initdb (or copies its template: template.go) as the
// cluster's account.
func (h *pgHost) initdb(ctx context.Context, c *cluster) error {
	initdb, err := lookBin("initdb")
	if err != nil {
		return err
	}
	if err := c.makeDataDir(); err != nil {
		return err
	}
	return c.initdbFromTemplate(ctx, initdb)
}

// initdbOnHost runs initdb itself.
func (c *cluster) initdbOnHost(ctx context.Context, initdb string) error {
	cmd := exec.CommandContext(ctx, initdb, append([]string{"-D", c.dataDir()}, initdbArgs...)...)
	cmd.SysProcAttr = credential(c.as)
	cmd.Dir = c.dataDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := child.Run(cmd); err != nil {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		return fmt.Errorf("initdb: %w\n%s", err, kit.Indent(lines[max(0, len(lines)-15):]))
	}
	return nil
}

// start runs the postmaster as the cluster's account and puts it in its
// limits group before it forks.
func (h *pgHost) start(_ context.Context, c *cluster, logf *os.File) error {
	postgres, err := lookBin("postgres")
	if err != nil {
		return err
	}
	cmd := exec.Command(postgres, "-D", c.dataDir())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = c.dataDir()
	cmd.SysProcAttr = credential(c.as)
	if err := child.Start(cmd); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	h.cmd, c.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(c.done)
	if !c.limits.Zero() { // before the postmaster forks: it reads its config first
		if h.group, err = kit.LimitPid(cmd.Process.Pid, c.limits); err != nil {
			c.stop()
			return fmt.Errorf("limits (%s): %w", c.limits, err)
		}
	}
	return nil
}

// stop shuts the postmaster down (fast shutdown: SIGINT), killing its group
// if it takes too long, and drops its limits group.
func (h *pgHost) stop(done <-chan struct{}) {
	if h.cmd != nil {
		kit.StopChild(h.cmd.Process.Pid, syscall.SIGINT, 20*time.Second, done)
	}
	h.cmd = nil
	kit.DropGroup(h.group)
	h.group = nil
}

func (h *pgHost) started() bool { return h.cmd != nil }

func (h *pgHost) pid() int {
	if h.cmd == nil {
		return 0
	}
	return h.cmd.Process.Pid
}

func (h *pgHost) cgroup() *cgroup.Group { return h.group }

// watch guards the postmaster's exit, and an OOM kill inside its limits
// group (a backend killed inside the limit, the postmaster living on).
func (h *pgHost) watch(ctx context.Context, t0 time.Time, c *cluster) (ended, ooms func() []guard.Trip) {
	if h.cmd == nil {
		return nil, nil
	}
	ooms = kit.OOMWatch(h.group, "postgres", t0) // a backend killed inside the limit, the postmaster living on
	cmd, pid := h.cmd, h.cmd.Process.Pid
	ended = guard.WatchExit(ctx, c.done, func() guard.Trip {
		return guard.ExitTrip(fmt.Sprintf("postgres (postmaster pid %d)", pid), guard.Since(t0), pid, cmd.ProcessState, false)
	})
	return ended, ooms
}

func (h *pgHost) ref() string { return "" }

func (h *pgHost) addInput(th *starlark.Thread, name string, l cgroup.Limits) {
	kit.AddLimitsInput(th, name+": postgres", l)
}

func (h *pgHost) binaries() string {
	bin, _ := lookBin("postgres")
	return bin
}

func (h *pgHost) close() {}
