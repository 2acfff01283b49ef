package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/index"
	"github.com/benchbook/benchbook/runtime"
)

func cmdIndex(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("index", "Builds the decision table across the notebooks of a directory from their\ncached results (nothing is executed): each notebook's decision row as its\nrecord opens with it (candidate, metric, before -> after, gain, cost / risk,\nevidence, recommendation), whether its runs were busy, and a dated log of\nthe decisions, newest last. Writes DIR/index.html and DIR/index.md.")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: benchbook index [flags] DIR\n\n")
		fs.PrintDefaults()
	}
	dir, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	err = index.Write(ctx, dir, index.Options{Engine: withModules(runtime.Options{}), Stdout: stdout, Stderr: stderr})
	if errors.Is(err, index.ErrNoNotebooks) {
		return usageError{err.Error()}
	}
	return err
}
