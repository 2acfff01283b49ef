package pgtest

import "syscall"

// procAttr runs the cluster as cred (nil: the test's user), killed with
// the test binary however it ends.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
