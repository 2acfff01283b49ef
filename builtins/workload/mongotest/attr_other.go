//go:build !linux

package mongotest

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }

// lockFile does not lock here: two builds at once cost time, not
// correctness (each renames its binary into place atomically).
func lockFile(string) (func(), error) { return func() {}, nil }
