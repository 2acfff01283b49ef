package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/refdoc"
	"github.com/benchbook/benchbook/stdlib"
)

//go:generate go run -trimpath . help -md ../../docs/reference

// cmdHelp prints the reference of a builtin, a module, a stdlib design or
// a command; with -md DIR it writes the whole reference as Markdown pages
// (docs/reference is made so: go generate ./cmd/benchbook).
func cmdHelp(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("help", flag.ContinueOnError)
	fs.SetOutput(stderr)
	md := fs.String("md", "", "write the reference as Markdown pages into this directory (docs/reference)")
	noColor := fs.Bool("no-color", false, "no colours (also: NO_COLOR=1)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: benchbook help [NAME]\n       benchbook help -md DIR\n\n"+
			"Prints the reference of NAME: a builtin (workload.http), a module (workload),\n"+
			"a stdlib design (abab, @std/abab.star) or a command (run). Without NAME, the\n"+
			"commands and the modules.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	ref, err := reference()
	if err != nil {
		return err
	}
	switch {
	case *md != "":
		if fs.NArg() > 0 {
			return usageError{"-md writes every page: it takes no NAME"}
		}
		return writeReference(*md, ref, stderr)
	case fs.NArg() == 0:
		usage(stdout)
		fmt.Fprintln(stdout, "\nModules (benchbook help NAME):")
		for _, p := range ref.pages {
			fmt.Fprintf(stdout, "  %-16s %s\n", p.Name, summary(p))
		}
		return nil
	}
	name := strings.Join(fs.Args(), " ")
	if fs.Arg(0) == "help" {
		fs.SetOutput(stdout)
		fs.Usage()
		return nil
	}
	if cmd, ok := commands[fs.Arg(0)]; ok { // "run", "kernel install"
		err := cmd.run(ctx, stdout, stdout, append(fs.Args()[1:], "-h"))
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	text, ok := ref.help(name)
	if !ok {
		return usageError{ref.unknown(name)}
	}
	fmt.Fprint(stdout, markdownForTerminal(text, useColor(*noColor, stdout)))
	return nil
}

// A ref is the whole reference of the builtins a notebook sees: the pages
// of the modules (their Docs), then the stdlib's (its docstrings).
type ref struct {
	pages []*refdoc.Page
}

// reference reads the modules' and the stdlib's docs once.
var reference = sync.OnceValues(func() (*ref, error) {
	r := &ref{}
	for _, m := range append([]runtime.Module{runtime.Core()}, modules()...) {
		p, err := refdoc.Parse(m.Name, m.Docs)
		if err != nil {
			return nil, fmt.Errorf("the %s module's reference: %w", m.Name, err)
		}
		r.pages = append(r.pages, p)
	}
	names, err := stdlibModules()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		src, err := stdlib.FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		p, err := refdoc.FromStarlark("@std/"+name, src, runtime.FileOptions())
		if err != nil {
			return nil, err
		}
		r.pages = append(r.pages, p)
	}
	return r, nil
})

// stdlibModules are the stdlib's module files, sorted.
func stdlibModules() ([]string, error) {
	entries, err := stdlib.FS.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".star") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// summary is a page's title without its module's name: "load generation".
func summary(p *refdoc.Page) string {
	_, after, ok := strings.Cut(p.Title, ": ")
	if !ok {
		return p.Title
	}
	return after
}

// page is the page of a module ("workload") or stdlib file ("abab.star",
// "@std/abab.star").
func (r *ref) page(name string) *refdoc.Page {
	for _, p := range r.pages {
		if p.Name == name || p.Name == "@std/"+name {
			return p
		}
	}
	return nil
}

// entry is the page and section that document a builtin; a member of a
// module documented as a whole (json.encode: go.starlark.net's json) has
// its module's.
func (r *ref) entry(name string) (*refdoc.Page, *refdoc.Section) {
	for _, p := range r.pages {
		if s := p.Entry(name); s != nil {
			return p, s
		}
	}
	if i := strings.LastIndex(name, "."); i > 0 {
		return r.entry(name[:i])
	}
	return nil, nil
}

// help is the Markdown benchbook help and :help print for name: a
// builtin's entry, a module's page, or the page of the stdlib module that
// defines a design (whose docstring documents it).
func (r *ref) help(name string) (string, bool) {
	if p := r.page(name); p != nil {
		return p.Source, true
	}
	p, s := r.entry(name)
	switch {
	case s == nil:
		return "", false
	case strings.HasPrefix(p.Name, "@std/"):
		return p.Source, true
	}
	return s.Markdown(), true
}

// unknown says that no builtin is named name, and which are near it: those
// whose last part is name (http: workload.http), else those containing it.
func (r *ref) unknown(name string) string {
	var last, near []string
	for _, p := range r.pages {
		for _, s := range p.Entries() {
			for _, n := range s.Names {
				i := strings.LastIndex(n, ".")
				switch {
				case n[i+1:] == name:
					last = append(last, n)
				case strings.Contains(n, name):
					near = append(near, n)
				}
			}
		}
	}
	msg := fmt.Sprintf("no builtin, module, stdlib design or command is named %q", name)
	if len(last) == 0 {
		last = near
	}
	if len(last) > 0 && len(last) <= 8 {
		msg += " (did you mean " + strings.Join(last, ", ") + "?)"
	}
	return msg + "; benchbook help lists the modules"
}
