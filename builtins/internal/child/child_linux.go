package child

import (
	"fmt"
	"os"
	"syscall"
)

// newGuard makes the marker, the cgroup and the supervisor. Each is best
// effort: without a cgroup the marker and process groups remain; without a
// supervisor the parent-death signal remains.
func newGuard() *guard {
	token := newToken()
	gd := &guard{marker: MarkerVar + "=" + token}
	dir := ""
	if os.Getenv(CgroupVar) != "off" {
		dir = makeCgroup("benchbook-" + token)
	}
	pipe, inCgroup, err := startSupervisor(gd.marker, dir)
	if !inCgroup {
		removeCgroup(dir)
		dir = ""
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchbook: no supervisor for child processes (they may outlive a kill -9 of benchbook): %v\n", err)
		return gd
	}
	gd.pipe = pipe
	if dir != "" {
		gd.cgroup, _ = os.Open(childrenDir(dir))
	} else {
		subreaper() // the supervisor walks our tree instead (tree_linux.go)
	}
	return gd
}

// procAttr is how a child starts: leading its own process group, killed
// when the spawning thread dies, cloned into the children's cgroup.
func (gd *guard) procAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if gd.cgroup != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, int(gd.cgroup.Fd())
	}
	return attr
}
