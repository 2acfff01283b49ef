package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// version is the module version when installed with go install, else the
// VCS revision the binary was built from, else, for go run (which stamps
// no revision), the revision of the source tree it was just compiled from,
// else "dev".
var version = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	rev, dirty := stampedRevision(info)
	if rev == "" {
		rev, dirty = sourceRevision()
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
})

// stampedRevision reads vcs.revision and vcs.modified from the build info.
func stampedRevision(info *debug.BuildInfo) (rev string, dirty bool) {
	if info == nil {
		return "", false
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}

// sourceRevision asks git about the directory this file was compiled from,
// for a binary that go run or go test just built (it lives in Go's
// temporary go-build dir), so the tree is the one it was built from. An
// installed binary built without a VCS stamp stays "dev": its source may
// have moved on since, and a record must not name a revision it was not
// built from.
func sourceRevision() (rev string, dirty bool) {
	exe, err := os.Executable()
	_, file, _, ok := goruntime.Caller(0)
	if err != nil || !ok {
		return "", false
	}
	return revisionOf(exe, file)
}

// revisionOf is sourceRevision for the binary exe compiled from file:
// nothing unless exe is in a go-build dir and file is a real path (not
// -trimpath's import path).
func revisionOf(exe, file string) (rev string, dirty bool) {
	if !strings.Contains(exe, string(filepath.Separator)+"go-build") || !filepath.IsAbs(file) {
		return "", false
	}
	dir := filepath.Dir(file)
	if _, err := os.Stat(dir); err != nil {
		return "", false
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	status, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(strings.TrimSpace(string(status))) > 0
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
