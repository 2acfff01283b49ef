package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/repl"
	"github.com/benchbook/benchbook/cmd/benchbook/internal/report"
	"github.com/benchbook/benchbook/cmd/benchbook/internal/watch"
	"github.com/benchbook/benchbook/runtime"
)

// The commands that keep a notebook open: the REPL, the Jupyter kernel and
// watch. Their flags are read here; the sessions are packages of their own.

func cmdRepl(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("repl", "Opens a notebook interactively without executing anything: values come from\nthe cache or are computed on first use. Input is Starlark evaluated against\nthe notebook's globals, or a :command (:help lists them). Ctrl-C cancels\nthe running input; Ctrl-D exits.")
	var nf notebookFlags
	nf.register(fs)
	path, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(nf.params) == 0 { // inspect the last run's values, whatever its -p
		nf.params = lastParams(path, nf.cacheDir, stderr)
	}
	// Ctrl-C cancels one input, not the session: the REPL handles SIGINT
	// itself, so the command's context (cancelled by the first SIGINT) is
	// only a source of values.
	base := context.WithoutCancel(ctx)
	sweepDead(base, stderr)
	e, err := openNotebook(base, path, &nf, runtime.Options{}, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	return repl.Run(base, e, repl.Options{Path: path, Params: nf.params, Modules: modules(), Stdout: stdout, Stderr: stderr, Reference: reference})
}

func cmdKernel(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "install" {
		return cmdKernelInstall(ctx, stdout, stderr, args[1:])
	}
	fs := newFlagSet("kernel", "Serves the Jupyter messaging protocol on the sockets of a connection file, as\na Jupyter kernel (Jupyter starts it; 'benchbook kernel install' registers it).\nA code cell headed \"# %% NAME\" (or sent with a cell id, as JupyterLab and VS\nCode do) is a cell of the session's notebook, cached as 'benchbook run' caches\nit; other input is evaluated as at the REPL, and :commands work as there.\nThe notebook's cache is .benchbook/NAME in the working directory, NAME the\nnotebook Jupyter names (JPY_SESSION_NAME) or -name.")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: benchbook kernel -f CONNECTION_FILE [flags]\n       benchbook kernel install [--user | --prefix DIR] [-p k=v ...]\n\n")
		fs.PrintDefaults()
	}
	var nf notebookFlags
	nf.register(fs)
	connFile := fs.String("f", "", "the connection file Jupyter wrote (kernel.json passes {connection_file})")
	name := fs.String("name", "", "the notebook's name, for its cache and record (default: JPY_SESSION_NAME's, else \"kernel\")")
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	if *connFile == "" || fs.NArg() > 0 {
		return usageError{"want -f CONNECTION_FILE and no other argument (see -h)"}
	}
	return repl.ServeKernel(ctx, *connFile, repl.KernelOptions{Name: *name, Engine: engineOptions(&nf, runtime.Options{}),
		NoColor: nf.noColor, Log: stderr, Reference: reference})
}

func cmdWatch(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("watch", "Runs the stale cells and writes the HTML record, then on every save of the\nnotebook reruns the changed cells and their dependents and rewrites the\nrecord. With -serve, also serves the record on a loopback address and\nreloads the page in the browser when it changes. Stops on Ctrl-C.")
	var nf notebookFlags
	nf.register(fs)
	out := fs.String("o", "", "record path (default: the notebook's path with .html)")
	serve := fs.String("serve", "", "serve the record at this loopback address, e.g. 127.0.0.1:8000")
	path, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	if *serve != "" {
		if err := watch.CheckLoopback(*serve); err != nil {
			return usageError{err.Error()}
		}
	}
	sweepDead(ctx, stderr)
	e, err := openNotebook(ctx, path, &nf, runtime.Options{}, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	return watch.Run(ctx, e, watch.Options{Path: path, Dest: report.RecordPath(path, *out, ".html"), Serve: *serve, Stdout: stdout, Stderr: stderr})
}
