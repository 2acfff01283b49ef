package fleet

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// Main is `benchbook agent [-cpus LIST] [-spec FILE -start-at TIME]`: with
// no -spec the agent takes its spec and start instant over stdin from a
// coordinator (local and ssh fleets); with -spec it reads the spec from
// FILE and starts at TIME (RFC 3339), as a Kubernetes pod does.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, run RunFunc) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cpus := fs.String("cpus", "", "pin the agent to these CPUs (\"0\", \"2-3\", \"0,2\")")
	specFile := fs.String("spec", "", "read the spec from this file instead of stdin")
	startAt := fs.String("start-at", "", "with -spec: the start instant, RFC 3339")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpus != "" {
		list, err := ParseCPUs(*cpus)
		if err != nil {
			return err
		}
		if err := Pin(list); err != nil {
			return err
		}
	}
	o := AgentOptions{In: stdin, Out: stdout, Run: run}
	if *specFile != "" {
		spec, at, err := fileSpec(*specFile, *startAt)
		if err != nil {
			return err
		}
		o.In, o.Spec, o.At = nil, spec, at
	}
	return Serve(ctx, o)
}

func fileSpec(path, startAt string) (*Spec, time.Time, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("agent: %w", err)
	}
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, time.Time{}, fmt.Errorf("agent: %s: %w", path, err)
	}
	at, err := time.Parse(time.RFC3339Nano, startAt)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("agent: -start-at: malformed instant %q (want RFC 3339)", startAt)
	}
	return &s, at, nil
}
