package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/report"
	"github.com/benchbook/benchbook/runtime"
)

// notebookFlags are the flags every notebook command shares.
type notebookFlags struct {
	cacheDir string
	params   paramFlag
	noColor  bool

	// lastParams: without -p, use the parameters of the notebook's last
	// run (render, cells), so they show that run and not the defaults.
	lastParams bool
}

func (f *notebookFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cacheDir, "cache-dir", "", "cache directory (default: .benchbook/NAME beside the notebook NAME.star)")
	fs.Var(&f.params, "p", "set a notebook parameter: -p name=value (repeatable)")
	fs.BoolVar(&f.noColor, "no-color", false, "no colours in progress lines (also: NO_COLOR=1)")
}

// paramFlag collects -p name=value.
type paramFlag map[string]string

func (p *paramFlag) String() string { return fmt.Sprint(map[string]string(*p)) }

func (p *paramFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	if *p == nil {
		*p = paramFlag{}
	}
	(*p)[name] = value
	return nil
}

// listFlag collects repeatable or comma-separated names.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

// parseArgs parses flags placed before or after the notebook path and
// returns the one positional argument.
func parseArgs(fs *flag.FlagSet, args []string, stderr io.Writer) (string, error) {
	fs.SetOutput(stderr)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return "", err
			}
			return "", usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		return "", usageError{fmt.Sprintf("want one notebook path, got %d arguments (see -h)", len(positional))}
	}
	return positional[0], nil
}

func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: benchbook %s [flags] notebook.star\n\n%s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// openNotebook parses the notebook and opens its engine.
func openNotebook(ctx context.Context, path string, f *notebookFlags, opts runtime.Options, stderr io.Writer) (*runtime.Engine, error) {
	nb, err := runtime.ParseFile(path)
	if err != nil {
		return nil, err
	}
	return openEngine(ctx, nb, f, opts, stderr)
}

// openEngine opens the engine of a parsed notebook: the one place every
// command makes its engine.
func openEngine(ctx context.Context, nb *runtime.Notebook, f *notebookFlags, opts runtime.Options, stderr io.Writer) (*runtime.Engine, error) {
	opts = engineOptions(f, opts)
	if f.lastParams && len(f.params) == 0 {
		opts.Params = lastParams(nb.Path, f.cacheDir, stderr)
	}
	opts.Stderr = stderr
	opts.Color = report.UseColor(f.noColor, stderr)
	return runtime.Open(ctx, nb, opts)
}

// engineOptions are what every engine the binary opens (the kernel's
// too) is given: the flags, the version, the modules.
func engineOptions(f *notebookFlags, opts runtime.Options) runtime.Options {
	opts.CacheDir = f.cacheDir
	opts.Params = f.params
	opts.Version = version()
	opts.Args = append([]string{"benchbook"}, os.Args[1:]...)
	return withModules(opts)
}

// lastParams reads the parameters of the notebook's last run and says so
// when there were any.
func lastParams(path, cacheDir string, stderr io.Writer) map[string]string {
	if cacheDir == "" {
		cacheDir = runtime.DefaultCacheDir(path)
	}
	p := runtime.LastParams(cacheDir)
	if len(p) > 0 {
		fmt.Fprintf(stderr, "with the last run's parameters: %s (-p sets others)\n", fmtParams(p))
	}
	return p
}

func fmtParams(p map[string]string) string {
	p = runtime.ShownParams(p)
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		names[i] = "-p " + k + "=" + p[k]
	}
	return strings.Join(names, " ")
}
