// Command benchbook-agent is `benchbook agent` alone: one agent of a fleet,
// for load boxes. It runs one agent of workload.agents without the notebook
// engine, Starlark or the record renderers, on a box that only generates
// load. A fleet runs it as it runs benchbook: `benchbook-agent agent [-cpus
// LIST] [-spec FILE -start-at TIME]` (the leading "agent" is optional), so
// workload.agents(ssh = [...], binary = "/path/to/benchbook-agent") uses it.
// TestAgentLinksNoEngine keeps it free of the engine.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchbook/benchbook/builtins/workload/fleet"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "agent" {
		args = args[1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := fleet.Main(ctx, args, os.Stdin, os.Stdout, os.Stderr, fleet.AgentRun); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		stop()
		os.Exit(1)
	}
}
