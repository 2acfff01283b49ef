// Package child starts every process benchbook runs, and makes sure none
// outlives benchbook. Those are targets, PostgreSQL, initdb, go build,
// workload.exec commands and the demo; neither they nor anything they start
// outlive it, even a SIGKILL of it.
//
// Three layers, each catching what the one before misses:
//
//  1. Each child leads a process group of its own (so stopping it reaches
//     its children) and gets SIGKILL when benchbook's spawning thread dies
//     (the parent-death signal). That reaches direct children only.
//  2. Where cgroup v2 is writable (root on these machines), each child is
//     cloned straight into a cgroup of this benchbook process, so every
//     descendant lands there too, even one that left the process group
//     (setsid, as PostgreSQL's backends and daemons do); writing
//     cgroup.kill ends them all at once.
//  3. A supervisor — this binary re-executed in a hidden mode, in a process
//     group of its own — holds the read end of a pipe whose write end only
//     benchbook has. When benchbook dies, however it dies, the kernel closes
//     the pipe; the supervisor reads EOF, kills the cgroup and every process
//     whose environment carries this run's marker (BENCHBOOK_CHILD_OF, set on
//     every child and inherited below it), then exits.
//  4. Without a cgroup, benchbook is a child subreaper: a descendant that
//     is orphaned is adopted by benchbook, not init, and stays in its tree
//     (adopt_linux.go). The supervisor walks that tree every 250 ms and
//     kills what it saw there when benchbook dies (tree_linux.go): the
//     descendant that left the group and shed the marker (setsid env -i).
//
// Start is the one way to start a child; nothing else in benchbook calls
// exec.Cmd.Start for a child process. The supervisor and the container
// reaper (builtins/internal/docker) are no children: they must outlive
// benchbook, long enough to clean up after it.
//
// Layers 2 to 4 and the parent-death signal are Linux's (child_linux.go,
// supervise_linux.go, adopt_linux.go, tree_linux.go). Elsewhere (child_other.go) only layer 1's process
// group remains: stopping a child kills its group, but a child outlives a
// benchbook that is killed without the chance to stop it.
package child

import (
	"crypto/rand"
	"encoding/hex"
	"github.com/benchbook/benchbook/runtime/procfs"
	"os"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"sync"
	"syscall"
)

// MarkerVar names the environment variable every child carries: its value
// is unique to one benchbook process, so the supervisor (and a test) can
// find every descendant by it, wherever it was reparented.
const MarkerVar = "BENCHBOOK_CHILD_OF"

// CgroupVar=off keeps children out of cgroups (the other layers remain):
// for a machine where cgroups are managed by something that minds, and for
// the tests of the layers without them.
const CgroupVar = "BENCHBOOK_CGROUP"

// guard is what this benchbook process set up for its children: the marker,
// the cgroup (when available), the supervisor's pipe.
type guard struct {
	marker string   // MarkerVar + "=" + token
	cgroup *os.File // the children's cgroup directory, nil without cgroup v2
	pipe   *os.File // write end; never written, closed only by our death
}

var (
	setup sync.Once
	g     *guard
)

// Start starts cmd as a child of benchbook: in its own process group, with
// the parent-death signal, in this process's children cgroup, with the
// marker in its environment, watched by the supervisor. cmd.SysProcAttr may
// carry a Credential; the rest of it is Start's. The caller waits for cmd as
// usual.
func Start(cmd *exec.Cmd) error {
	setup.Do(func() { g = newGuard() })
	attr := g.procAttr()
	if cmd.SysProcAttr != nil {
		attr.Credential = cmd.SysProcAttr.Credential
	}
	cmd.SysProcAttr = attr
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, g.marker)
	err := startOnSpawnThread(cmd)
	goruntime.KeepAlive(g.cgroup)
	return err
}

// Run starts cmd with Start and waits for it.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// Marker returns this process's MarkerVar=value pair ("" before the first
// child started).
func Marker() string {
	if g == nil {
		return ""
	}
	return g.marker
}

// KillGroup signals the process group led by pid.
func KillGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// spawns carries every start to the one goroutine that forks. The
// parent-death signal fires when the OS thread that forked the child exits,
// not the process; Go ends a thread when a goroutine locked to it returns
// (anywhere in benchbook, yaegi included), so children are forked from a
// thread that is locked for good and never exits.
var spawns = make(chan spawnReq)

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// spawner starts the forking goroutine, once, at the first start.
var spawner sync.Once

func startOnSpawnThread(cmd *exec.Cmd) error {
	spawner.Do(func() {
		go func() {
			goruntime.LockOSThread() // never unlocked: the thread lives as long as benchbook
			for r := range spawns {
				r.done <- startRegistered(r.cmd)
			}
		}()
	})
	done := make(chan error, 1)
	spawns <- spawnReq{cmd, done}
	return <-done
}

// startRegistered starts cmd and notes its process as one an exec.Cmd
// waits for (adopt_linux.go), before its zombie can be reaped as adopted.
func startRegistered(cmd *exec.Cmd) error {
	startMu.Lock()
	defer startMu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	register(cmd.Process.Pid)
	return nil
}

// newToken names this benchbook process in its children's marker (and in
// its cgroup's name): its pid, the pid namespace that pid is counted in
// (procfs.OwnerGone), and random bytes, since pids are reused.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.Itoa(os.Getpid()) + "-" + procfs.PidNamespace() + "-" + hex.EncodeToString(b[:])
}
