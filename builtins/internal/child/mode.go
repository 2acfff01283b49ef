package child

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// A Mode is a hidden mode of the benchbook binary: benchbook re-executes
// itself as "benchbook ARG ..." to do one job in a process of its own (the
// supervisor of its children, the reaper of its containers, the demo
// target). builtins/hidden lists benchbook's modes in one table.
type Mode struct {
	Arg string              // the hidden first argument: "__supervise"
	Run func(args []string) // the mode's whole life, given the arguments after Arg
}

var (
	servedMu sync.Mutex
	served   = map[string]bool{} // the modes RunMode was given
)

// RunMode runs the mode this process was started in (os.Args[1] is its
// Arg) and exits; otherwise it notes modes as ones this binary runs, which
// ModeCommand may start it in, and returns. A binary's main calls it
// first (cmd/benchbook through builtins/hidden), and so does the TestMain
// of a test binary whose tests start children, containers or the demo:
// re-executed, it must do the job, not run its tests again.
func RunMode(modes ...Mode) {
	for _, m := range modes {
		if len(os.Args) > 1 && os.Args[1] == m.Arg {
			m.Run(os.Args[2:])
			os.Exit(0)
		}
	}
	servedMu.Lock()
	defer servedMu.Unlock()
	for _, m := range modes {
		served[m.Arg] = true
	}
}

// ModeCommand is this binary re-executed in the mode named arg with args:
// in a process group of its own (a Ctrl-C or a group kill of benchbook
// misses it) and without this run's marker (a helper must outlive
// benchbook, so the supervisor must spare it; and a benchbook run by a
// benchbook must not be reaped by the outer one's supervisor). A mode whose
// process is a child of benchbook (the demo) goes through Start, which
// gives it the marker back. It fails when this binary does not run the
// mode (RunMode): re-executed, it would do something else, and a test
// binary would run its tests again.
func ModeCommand(arg string, args ...string) (*exec.Cmd, error) {
	servedMu.Lock()
	ok := served[arg]
	servedMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("this binary does not run the hidden mode %s: its main (a test's TestMain) must pass it to child.RunMode (builtins/hidden.Run)", arg)
	}
	exe, err := self()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{arg}, args...)...)
	cmd.Env = append(WithoutMarker(os.Environ()), HelperVar+"="+arg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

// self is this binary: /proc/self/exe where there is one, which is this
// binary even if its file was replaced or removed.
func self() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// HelperVar names the variable ModeCommand sets: the supervisor, walking
// benchbook's process tree, spares a child that has it and no marker.
const HelperVar = "BENCHBOOK_HELPER"

// WithoutMarker returns env without MarkerVar: the one filter for every
// process that must not count as one of this benchbook's children.
func WithoutMarker(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, MarkerVar+"=") {
			out = append(out, kv)
		}
	}
	return out
}
