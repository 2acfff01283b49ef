//go:build !linux

package workload

import "syscall"

// pgProcAttr runs the test cluster as the postgres user; without Linux's
// parent-death signal, only the tests' cleanups stop it.
func pgProcAttr(uid, gid uint32) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
}
