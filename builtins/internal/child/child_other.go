//go:build !linux

package child

import (
	"os"
	"sync"
	"syscall"
)

// startMu orders starts; there is no adoption to reap outside Linux.
var startMu sync.Mutex

func register(int) {}

// Supervisor is the supervisor's mode, which nothing starts outside Linux.
var Supervisor = Mode{Arg: "__supervise", Run: func([]string) { os.Exit(2) }}

// newGuard makes the marker alone. There is no parent-death signal, no
// cgroup v2 and no /proc to find marked processes by outside Linux, so no
// supervisor either: a child leads its own process group, and stopping it
// (KillGroup) reaches its descendants that stayed in that group, but a
// child outlives a benchbook killed without the chance to stop it (kill -9),
// and a descendant that left the group (setsid) outlives its parent's stop.
func newGuard() *guard {
	return &guard{marker: MarkerVar + "=" + newToken()}
}

// procAttr is how a child starts: leading its own process group.
func (gd *guard) procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
