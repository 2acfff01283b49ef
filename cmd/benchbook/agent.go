package main

import (
	"context"
	"io"
	"os"

	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/builtins/workload/fleet"
)

// cmdAgent is `benchbook agent`: one agent of a fleet (workload.agents),
// started by a coordinating benchbook over stdin/stdout (a local process or
// an ssh session) or as a Kubernetes pod with -spec and -start-at. It runs
// its share through the same generator as a local workload.
func cmdAgent(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return fleet.Main(ctx, args, os.Stdin, stdout, stderr, workload.AgentRun)
}
