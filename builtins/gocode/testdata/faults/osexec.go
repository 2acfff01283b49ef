package osexec

import "os/exec"

func Run() error { return exec.Command("true").Run() }
