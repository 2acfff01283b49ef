package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/benchbook/benchbook/builtins/metric/gate"
	"github.com/benchbook/benchbook/cmd/benchbook/internal/report"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/bytesize"
	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/record"
)

func cmdRun(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("run", "Executes the stale cells of a notebook in dependency order (cached cells are\nhits) and writes its record, notebook.html by default.")
	var nf notebookFlags
	nf.register(fs)
	var rerun listFlag
	fs.Var(&rerun, "rerun", "execute these cells even if cached (repeatable, or comma-separated)")
	rerunAll := fs.Bool("rerun-all", false, "execute every cell")
	out := fs.String("o", "", "record path (default: the notebook's path with .html, .md or .json)")
	format := fs.String("format", "html", "record format: html, md or json")
	var gates gateOptions
	gates.register(fs)
	path, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if err := checkBaseline(gates.baseline); err != nil {
		return err
	}
	start := time.Now()
	sweepDead(ctx, stderr)
	e, err := openNotebook(ctx, path, &nf, runtime.Options{Rerun: rerun, RerunAll: *rerunAll}, stderr)
	if errors.Is(err, runtime.ErrNoCell) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	defer e.Close()
	e.Run(true)
	return finish(e, path, *out, *format, start, stderr, gates)
}

// checkBaseline fails before anything runs when -baseline names a file
// that cannot serve: a notebook that runs for an hour should not end in
// "no such file". The gates themselves read it again (baseline.go).
func checkBaseline(path string) error {
	if path == "" {
		return nil
	}
	data, err := limits.ReadFile(path, limits.Record)
	if err != nil {
		return usageError{fmt.Sprintf("-baseline: %v", err)}
	}
	if _, err := gate.ParseBaseline(data); err != nil {
		return usageError{fmt.Sprintf("-baseline %s: %v", path, err)}
	}
	return nil
}

// finish writes the record and maps the engine's outcome to an error.
func finish(e *runtime.Engine, path, out, format string, start time.Time, stderr io.Writer, gates gateOptions) error {
	dest := report.RecordPath(path, out, "."+format)
	rec := e.Record()
	var gateErr error
	if gates.baseline != "" && !e.Interrupted {
		gateErr = applyGates(rec, gates, stderr)
	}
	size, err := report.WriteRecord(rec, dest, format)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s in %s; wrote %s (%s)\n", report.Summary(e.Summary()), record.FormatDuration(time.Since(start)), dest, bytesize.Format(size))
	switch {
	case e.Interrupted:
		return errInterrupted
	case e.Failed():
		return errCellsFailed
	}
	return gateErr
}
