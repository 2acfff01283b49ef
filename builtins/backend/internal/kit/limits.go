package kit

import (
	"context"
	"fmt"
	"github.com/benchbook/benchbook/runtime/procfs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/runtime"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// This file holds the resource limits that backend.container,
// backend.process and backend.postgres share: cpus (a CPU quota: 0.5 is
// half a core), memory ("64MB", "4GB": swap off), cpuset ("0-1") and pids.
// A container gets them from its engine; a process or a cluster without
// Docker gets them from a cgroup of its own (builtins/internal/cgroup),
// which is also what its window figures are read from.

// LimitArgs are the limit arguments as a builtin unpacks them.
type LimitArgs struct {
	cpus   starlark.Value
	memory starlark.Value
	cpuset string
	pids   int
}

// Pairs are the UnpackArgs pairs of the limit arguments.
func (a *LimitArgs) Pairs() []any {
	return []any{"cpus?", &a.cpus, "memory?", &a.memory, "cpuset?", &a.cpuset, "pids?", &a.pids}
}

// Limits checks the arguments; errors name the argument.
func (a *LimitArgs) Limits() (cgroup.Limits, error) {
	var l cgroup.Limits
	switch c := a.cpus.(type) {
	case nil, starlark.NoneType:
	case starlark.Int, starlark.Float:
		f, _ := starlark.AsFloat(c)
		if f <= 0 {
			return l, fmt.Errorf("cpus: want a number of CPUs > 0, got %s", c)
		}
		l.CPUs = f
	default:
		return l, fmt.Errorf("cpus: want a number of CPUs such as 0.5 or 2, got %s", c.Type())
	}
	switch m := a.memory.(type) {
	case nil, starlark.NoneType:
	case starlark.String:
		n, err := bytesize.Parse(string(m))
		if err == nil && n <= 0 {
			err = fmt.Errorf("want a size > 0, got %q", m)
		}
		if err != nil {
			return l, fmt.Errorf("memory: %w", err)
		}
		l.Memory = n
	case starlark.Int:
		n, ok := m.Int64()
		if !ok || n <= 0 {
			return l, fmt.Errorf("memory: want a size > 0, got %s", m)
		}
		l.Memory = n
	default:
		return l, fmt.Errorf(`memory: want a size such as "64MB" or "4GB", got %s`, m.Type())
	}
	if l.Memory > 0 && l.Memory < 6<<20 {
		return l, fmt.Errorf("memory: %s is below the 6MB any process needs", bytesize.Format(l.Memory))
	}
	if a.cpuset != "" {
		if err := checkCpuset(a.cpuset); err != nil {
			return l, fmt.Errorf("cpuset: %w", err)
		}
		l.Cpuset = a.cpuset
	}
	if a.pids < 0 {
		return l, fmt.Errorf("pids: want a number > 0, got %d", a.pids)
	}
	l.Pids = int64(a.pids)
	return l, nil
}

// checkCpuset accepts "0", "0-1", "0,2-3".
func checkCpuset(s string) error {
	for _, part := range splitComma(s) {
		lo, hi, isRange := cutDash(part)
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return fmt.Errorf(`want CPU numbers such as "0", "0-1" or "0,2", got %q`, s)
		}
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func cutDash(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// groupSeq numbers the cgroups this process makes.
var groupSeq atomic.Int64

// GroupPrefix starts the names of benchbook's cgroups; the owner's pid and
// the pid namespace it is counted in follow, so StaleGroup can tell the
// ones whose owner is gone.
const GroupPrefix = "benchbook-limits-"

// StaleGroup says whether a limits group's owner (the pid in its name,
// counted in the namespace beside it) is gone for sure (procfs.OwnerGone).
func StaleGroup(name string) bool {
	f := strings.Split(strings.TrimPrefix(name, GroupPrefix), "-") // pid, pid namespace, sequence
	pid, err := strconv.Atoi(f[0])
	return err == nil && len(f) == 3 && procfs.OwnerGone(pid, f[1])
}

// LimitPid puts a freshly started process into a new cgroup with l. The
// process is moved right after it started: anything it forked before that
// instant stays outside (targets fork after they set up, so none do).
func LimitPid(pid int, l cgroup.Limits) (*cgroup.Group, error) {
	name := fmt.Sprintf("%s%d-%s-%d", GroupPrefix, os.Getpid(), procfs.PidNamespace(), groupSeq.Add(1))
	g, err := cgroup.New(name, l)
	if err != nil {
		return nil, err
	}
	if err := g.Add(pid); err != nil {
		_ = g.Remove()
		return nil, err
	}
	return g, nil
}

// DropGroup removes a group once its processes are gone (they leave it
// when reaped, a moment after they exit).
func DropGroup(g *cgroup.Group) {
	if g == nil {
		return
	}
	for i := 0; i < 200 && !g.Empty(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	_ = g.Remove()
}

// ObserveGroup adds the group's window figures (cgroup.Observe) to those of
// another observer; it is a no-op without a group.
func ObserveGroup(ctx context.Context, g *cgroup.Group, stop func(int64) (map[string]float64, error)) func(int64) (map[string]float64, error) {
	if g == nil {
		return stop
	}
	gstop, err := cgroup.Observe(ctx, g)
	if err != nil {
		return stop
	}
	return func(requests int64) (map[string]float64, error) {
		figs, err := stop(requests)
		if figs == nil {
			figs = map[string]float64{}
		}
		for k, v := range gstop(requests) {
			if _, ok := figs[k]; !ok {
				figs[k] = v
			}
		}
		return figs, err
	}
}

// AddLimitsInput records the limits a cell's target ran under, for the
// record's provenance (it describes; it makes nothing stale).
func AddLimitsInput(th *starlark.Thread, what string, l cgroup.Limits) {
	if l.Zero() {
		return
	}
	// Not the group's path: it names benchbook's pid, and a live cell's
	// inputs are part of its dependents' keys.
	runtime.AddInput(th, runtime.Input{Kind: "server", Name: what + ": " + l.String()})
}

// OOMWatch notes the OOM kills of g now; the returned func gives a fatal
// oom_killed trip when the kernel killed any process of g since: a worker
// killed inside a limited target that lives on (a PostgreSQL backend, a
// forked server process) would otherwise leave the run valid. Nil g: none.
func OOMWatch(g *cgroup.Group, src string, t0 time.Time) func() []guard.Trip {
	if g == nil {
		return func() []guard.Trip { return nil }
	}
	s0, err := g.Read()
	if err != nil {
		return func() []guard.Trip { return nil }
	}
	return func() []guard.Trip {
		s, err := g.Read()
		if err != nil || s.OOMKills <= s0.OOMKills {
			return nil
		}
		return []guard.Trip{{At: guard.Since(t0), Source: src, Kind: "oom_killed", Fatal: true,
			Evidence: fmt.Sprintf("the kernel's OOM killer killed %d process(es) in its cgroup (memory limit %s)",
				s.OOMKills-s0.OOMKills, bytesize.Format(s.Limit))}}
	}
}
