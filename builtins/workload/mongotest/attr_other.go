//go:build !linux

package mongotest

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
