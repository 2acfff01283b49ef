package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
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

// writeRecord writes the record atomically in the given format, making
// the folder it goes in when it does not exist (-o records/today/nb.html).
func writeRecord(r *record.Record, dest, format string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	n, err := writeRecordFile(r, dest, format)
	if errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) {
		err = fmt.Errorf("%w (%s is not writable here: write the record elsewhere with -o PATH, or :render PATH in the REPL; finished cells are cached)", err, filepath.Dir(dest))
	}
	return n, err
}

func writeRecordFile(r *record.Record, dest, format string) (int64, error) {
	if format == "md" {
		if err := record.Markdown(r, dest); err != nil {
			return 0, err
		}
		st, err := os.Stat(dest)
		if err != nil {
			return 0, err
		}
		return st.Size(), nil
	}
	var buf bytes.Buffer
	var err error
	if format == "json" {
		err = record.JSON(&buf, r)
	} else {
		err = record.HTML(&buf, r)
	}
	if err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".record-*")
	if err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("record: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	os.Chmod(tmp.Name(), 0o644)
	return int64(buf.Len()), os.Rename(tmp.Name(), dest)
}
