package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/benchbook/benchbook/runtime"
)

func cmdRender(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("render", "Writes a notebook's record from the cache alone: nothing is executed; cells\nnever computed for their current source are shown as such.")
	nf := notebookFlags{lastParams: true}
	nf.register(fs)
	out := fs.String("o", "", "record path (default: the notebook's path with .html, .md or .json)")
	format := fs.String("format", "html", "record format: html, md (plus NAME_files/*.svg) or json")
	path, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	start := time.Now()
	e, err := openNotebook(ctx, path, &nf, runtime.Options{}, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Run(false)
	err = finish(e, path, *out, *format, start, stderr, gateOptions{})
	if err == errCellsFailed {
		return nil // rendering a notebook with failed cells is not itself a failure
	}
	return err
}

func checkFormat(f string) error {
	switch f {
	case "html", "md", "json":
		return nil
	}
	return usageError{fmt.Sprintf("-format %s: want html, md or json", f)}
}
