package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/benchbook/benchbook/builtins/backend"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/bytesize"
)

func cmdClean(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("clean", "Removes cache entries, memo checkpoints and resources (cluster data, process\nfiles) that no cell of the notebook references any more. With -all, removes the\nwhole cache directory. Also removes the containers and cgroups of benchbooks\nthat are gone.")
	var nf notebookFlags
	nf.register(fs)
	all := fs.Bool("all", false, "remove the whole cache directory")
	path, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	e, err := openNotebook(ctx, path, &nf, runtime.Options{}, io.Discard)
	if err != nil {
		return err
	}
	if msg := backend.CleanOrphans(ctx); msg != "" {
		fmt.Fprintln(stdout, msg)
	}
	if *all {
		dir := e.CacheDir()
		e.Close()
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s\n", dir)
		return nil
	}
	defer e.Close()
	e.Run(false)
	res, err := e.Clean()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %d entries, %d memo sets, %d resources, %d temp files of killed runs (%s)\n", res.Entries, res.Memos, res.Resources, res.Temps, bytesize.Format(res.Bytes))
	return nil
}

// sweepDead removes what a benchbook that is gone left running (its
// containers, when its reaper died with it) before a run, and says so.
func sweepDead(ctx context.Context, stderr io.Writer) {
	if msg := backend.SweepDead(ctx); msg != "" {
		fmt.Fprintln(stderr, msg)
	}
}
