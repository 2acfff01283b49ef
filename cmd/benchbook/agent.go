package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
)

// cmdAgent is `benchbook agent`: one agent of a fleet (workload.agents),
// started by a coordinating benchbook over stdin/stdout (a local process or
// an ssh session) or as a Kubernetes pod with -spec and -start-at. It runs
// its share through the same generator as a local workload.
func cmdAgent(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return fleet.Main(ctx, args, os.Stdin, stdout, stderr, fleet.AgentRun)
}

// serveAgentChild runs `agent` and exits when this process was started as
// one; otherwise it returns. Tests call it first: a local fleet re-executes
// the running executable, which in a test is the test binary.
func serveAgentChild() {
	if len(os.Args) < 2 || os.Args[1] != "agent" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := cmdAgent(ctx, os.Stdout, os.Stderr, os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
