// Package demotarget is the embedded demo target, a small search API over
// SQLite: the server that benchbook, re-executed in its hidden "__demo"
// mode (Mode), runs as a child so notebooks have something real to measure
// on a machine with only Go. backend.demo (builtins/backend/demo) starts
// it and is the notebook's handle to it; builtins/hidden lists its mode.
package demotarget

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// DataDir is where the demo keeps its generated databases, shared by every
// notebook of the user (they are deterministic: one file per rows and index
// option): the user's cache directory, else a per-user one under /tmp.
func DataDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "benchbook", "demo")
	}
	return filepath.Join(os.TempDir(), "benchbook-demo-"+strconv.Itoa(os.Getuid()))
}

// Mode is the hidden mode of the demo target ("__demo -rows=N ..."), a
// child of the benchbook that launched it.
var Mode = child.Mode{Arg: "__demo", Run: func(args []string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Serve(ctx, args); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		stop()
		os.Exit(1)
	}
}}
