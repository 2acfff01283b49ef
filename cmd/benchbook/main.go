// Command benchbook runs investigation notebooks and renders their records.
// A notebook is a Starlark file in the Jupytext percent format whose cells
// drive load, observe servers, compare arms and render a reproducible HTML
// record.
//
// Usage:
//
//	benchbook run [flags] notebook.star      execute stale cells, write notebook.html
//	benchbook render [flags] notebook.star   render from the cache alone
//	benchbook cells [flags] notebook.star    list cells: status, reads, defines
//	benchbook repl [flags] notebook.star     evaluate, rerun cells, inspect interactively
//	benchbook watch [flags] notebook.star    rerun changed cells on save; -serve the record
//	benchbook index DIR                      the decision table across notebooks
//	benchbook new [-template T] notebook.star  a new notebook from a template
//	benchbook clean [flags] notebook.star    drop cache entries no cell uses
//	benchbook version
//	benchbook agent [-cpus LIST]                one agent of a fleet (workload.agents)
//	benchbook kernel -f CONNECTION_FILE         a Jupyter kernel (kernel install registers it)
//	benchbook convert nb.star | nb.ipynb        between .star and .ipynb (-to ipynb|star)
//	benchbook help [NAME]                       the reference: a builtin, module or command
//
// Exit status: 0 when every cell succeeded, 1 when a cell failed, 2 on a
// usage error, 130 when interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/runtime/redact"
)

// command is one subcommand: its work in a plain function tests can call.
type command struct {
	summary string
	run     func(ctx context.Context, stdout, stderr io.Writer, args []string) error
}

var commands = map[string]command{
	"run":     {"execute the stale cells of a notebook and write its record", cmdRun},
	"render":  {"write a notebook's record from the cache alone", cmdRender},
	"cells":   {"list a notebook's cells with status, reads and defines", cmdCells},
	"clean":   {"remove cache entries and resources no cell references", cmdClean},
	"repl":    {"open a notebook interactively: evaluate, rerun cells, inspect", cmdRepl},
	"watch":   {"rerun changed cells on every save and re-render (optionally serve) the record", cmdWatch},
	"index":   {"build the decision table across a directory of notebooks", cmdIndex},
	"new":     {"write a new notebook from a template (" + strings.Join(templateNames(), ", ") + ")", cmdNew},
	"version": {"print the benchbook version", cmdVersion},
	"agent":   {"run one agent of a fleet (started by workload.agents, not by hand)", cmdAgent},
	"kernel":  {"serve notebooks to Jupyter as a kernel; 'kernel install' registers it", cmdKernel},
	"convert": {"convert a notebook between .star and Jupyter's .ipynb", cmdConvert},
}

// helpCommand prints the reference (help.go). It is not in commands, which
// it reads: that would be an initialization cycle.
var helpCommand = command{helpSummary, cmdHelp}

const helpSummary = "the reference of a builtin, module or command: help workload.http"

// Errors that map to exit codes.
var (
	errCellsFailed = errors.New("some cells failed")
	errInterrupted = errors.New("interrupted")
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	hidden.Run() // benchbook re-executed as its own helper: the supervisor, the reaper, the demo
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if len(os.Args) > 1 && stopsHard[os.Args[1]] {
		go hardStop(ctx, os.Stderr)
	}
	code := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and turns its error into an exit code.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	stderr = redact.Writer(stderr) // progress, errors and warnings: no password gets out
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if args[0] == "help" {
		cmd, ok = helpCommand, true
	}
	if !ok {
		fmt.Fprintf(stderr, "benchbook: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(ctx, stdout, stderr, args[1:])
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "benchbook %s: %s\n", args[0], ue.msg)
		return 2
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(stderr, "benchbook: interrupted; finished cells are cached, rerun to resume")
		return 130
	case errors.Is(err, errCellsFailed):
		return 1
	}
	fmt.Fprintf(stderr, "benchbook %s: %v\n", args[0], err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "benchbook runs investigation notebooks and renders them as reproducible records.")
	fmt.Fprintln(w, "\nUsage: benchbook <command> [flags] notebook.star\n\nCommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
	fmt.Fprintf(w, "  %-8s %s\n", "help", helpSummary)
	fmt.Fprintln(w, "\nRun 'benchbook <command> -h' for the flags of a command.")
}
