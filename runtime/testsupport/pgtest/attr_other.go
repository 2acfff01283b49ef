//go:build !linux

package pgtest

import "syscall"

// procAttr runs the cluster as cred (nil: the test's user); without
// Linux's parent-death signal, only the tests' cleanups stop it.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
