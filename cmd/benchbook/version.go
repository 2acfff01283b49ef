package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	goruntime "runtime"
	"runtime/debug"
)

// version is the module version when installed with go install, else the
// VCS revision the binary was built from, else "dev".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}

func cmdVersion(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "Usage: benchbook version") }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("takes no arguments, got %q", fs.Args())}
	}
	fmt.Fprintf(stdout, "benchbook %s (%s %s/%s)\n", version(), goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	return nil
}
