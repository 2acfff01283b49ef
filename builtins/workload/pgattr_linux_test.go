package workload

import "syscall"

// pgProcAttr runs the test cluster as the postgres user, killed with the
// test binary however it ends.
func pgProcAttr(uid, gid uint32) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}, Pdeathsig: syscall.SIGKILL}
}
