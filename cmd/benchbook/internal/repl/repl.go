// Package repl is benchbook's interactive side: the REPL (benchbook repl)
// and the Jupyter kernel's language session (benchbook kernel), which
// drives the REPL's session so its commands, completion and display are
// the REPL's own.
package repl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/help"
	"github.com/benchbook/benchbook/cmd/benchbook/internal/report"
	"github.com/benchbook/benchbook/runtime"
)

// replSyntax matches the dialect of notebook cells, so that what parses in a
// cell parses at the prompt.
var replSyntax = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// Options is what the command hands the REPL.
type Options struct {
	Path    string            // the notebook's file: :reload rereads it, :render writes beside it
	Params  map[string]string // the parameters the engine was opened with (-p, else the last run's)
	Modules []runtime.Module  // the builtin modules, completed after a dot
	Stdin   *os.File          // a terminal gets line editing and history; nil is os.Stdin
	Stdout  io.Writer         // values and command output
	Stderr  io.Writer         // errors, warnings, the engine's progress
	// Reference is the builtins' reference (read once, when first asked),
	// which :help NAME prints.
	Reference func() (*help.Ref, error)
}

// Run reads, evaluates and prints against the open engine until Ctrl-D,
// :quit or SIGTERM. Ctrl-C cancels one input, not the session: the REPL
// handles SIGINT itself, so ctx is only a source of values and its
// cancellation ends nothing.
func Run(ctx context.Context, e *runtime.Engine, opts Options) error {
	r := &repl{e: e, path: opts.Path, base: context.WithoutCancel(ctx), out: opts.Stdout, errw: opts.Stderr,
		params: copyParams(opts.Params), builtins: builtinValues(opts.Modules), stdin: cmp.Or(opts.Stdin, os.Stdin), reference: opts.Reference}
	return r.session()
}

// repl is one interactive session on an open notebook.
type repl struct {
	e      *runtime.Engine
	path   string
	base   context.Context // parent of every input's context
	out    io.Writer
	errw   io.Writer
	in     lineReader
	sig    *interrupts
	params map[string]string
	stdin  *os.File
	tty    bool
	color  bool            // Markdown shown with bold and colours
	ended  atomic.Bool     // SIGTERM
	warned map[string]bool // notebook globals already reported as shadowed

	builtins  starlark.StringDict // the modules' values and Starlark's universe, for completion
	reference func() (*help.Ref, error)

	// show, when set, presents displayed values instead of printing their
	// text (the kernel publishes them as MIME bundles); omit hides
	// commands from :help (the kernel has no :reload or :quit).
	show func([]starlark.Value)
	omit map[string]bool
}

// session runs the read-eval-print loop until Ctrl-D, :quit or SIGTERM.
func (r *repl) session() error {
	r.e.Plan()
	if err := r.openInput(); err != nil {
		return err
	}
	defer r.in.Close()
	r.sig = watchInterrupts(r.idleInterrupt, r.terminate)
	defer r.sig.stop()
	if r.tty {
		r.banner()
	}
	for !r.ended.Load() {
		src, err := r.read()
		switch {
		case errors.Is(err, io.EOF):
			if r.tty {
				fmt.Fprintln(r.out)
			}
			return nil
		case errors.Is(err, errPromptInterrupt):
			continue
		case err != nil:
			fmt.Fprintln(r.errw, err)
			continue
		}
		if quit := r.do(src); quit {
			return nil
		}
	}
	return nil
}

// openInput picks readline on a terminal, plain lines otherwise.
func (r *repl) openInput() error {
	r.tty = runtime.IsTerminal(r.stdin)
	r.color = r.tty && report.UseColor(false, r.out)
	if !r.tty {
		r.in = newPlainReader(r.stdin)
		return nil
	}
	dir := r.e.CacheDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	in, err := newTTYReader(r.stdin, filepath.Join(dir, "repl_history"), r.completer(), r.out, r.errw)
	if err != nil {
		return err
	}
	r.in = in
	return nil
}

// completer completes what the REPL (and the kernel) reads: commands, cell
// names, globals, builtins and the attributes of values at hand.
func (r *repl) completer() *completer {
	return &completer{globals: r.e.Globals, cells: r.cellNames, values: r.builtins, peek: r.e.Peek}
}

// builtinValues are the names a notebook has without defining them: the
// modules' and Starlark's own.
func builtinValues(modules []runtime.Module) starlark.StringDict {
	vals := runtime.MustModuleSet(nil, modules...).Globals()
	for k, v := range starlark.Universe {
		vals[k] = v
	}
	return vals
}

func (r *repl) banner() {
	fmt.Fprintf(r.out, "benchbook repl: %s, %d code cells. :help lists commands; Ctrl-D exits.\n", r.path, len(r.cellNames()))
}

// idleInterrupt answers a SIGINT that arrives while nothing runs.
func (r *repl) idleInterrupt() {
	fmt.Fprintln(r.errw, "\n(interrupt: nothing is running; Ctrl-D or :quit exits)")
}

func (r *repl) terminate() {
	r.ended.Store(true)
	r.in.Close()
}

// read returns one complete input: a :command, or Starlark source that
// parses as a statement (continuing over lines while a block is open). An
// empty line gives "".
func (r *repl) read() (string, error) {
	first, err := r.in.ReadLine(">>> ")
	if errors.Is(err, errPromptInterrupt) && strings.TrimSpace(first) == "" {
		fmt.Fprintln(r.errw, "(Ctrl-C at the prompt does not exit; use Ctrl-D or :quit)")
	}
	if err != nil {
		return "", err
	}
	trimmed := strings.TrimSpace(first)
	if trimmed == "" || strings.HasPrefix(trimmed, ":") {
		return trimmed, nil
	}
	return r.readStatement(first)
}

// readStatement reads continuation lines until the input is a complete
// statement, as go.starlark.net's repl does.
func (r *repl) readStatement(first string) (string, error) {
	lines := []string{first}
	gaveFirst := false
	var readErr error
	next := func() ([]byte, error) {
		if !gaveFirst {
			gaveFirst = true
			return []byte(first + "\n"), nil
		}
		line, err := r.in.ReadLine("... ")
		if err != nil {
			readErr = err
			return nil, err
		}
		lines = append(lines, line)
		return []byte(line + "\n"), nil
	}
	_, err := replSyntax.ParseCompoundStmt("<repl>", next)
	switch {
	case readErr != nil && errors.Is(readErr, io.EOF):
		return "", io.EOF
	case readErr != nil:
		return "", readErr
	case err != nil:
		return "", err
	}
	return strings.Join(lines, "\n") + "\n", nil
}
