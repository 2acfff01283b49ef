package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/help"
	"github.com/benchbook/benchbook/cmd/benchbook/internal/repl"
	"github.com/benchbook/benchbook/cmd/benchbook/internal/report"
	"github.com/benchbook/benchbook/cmd/benchbook/internal/termmd"
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
		cli, err := cliPage()
		if err != nil {
			return err
		}
		return ref.Write(*md, cli, stderr)
	case fs.NArg() == 0:
		usage(stdout)
		fmt.Fprintln(stdout, "\nModules (benchbook help NAME):")
		for _, p := range ref.Pages {
			fmt.Fprintf(stdout, "  %-16s %s\n", p.Name, help.Summary(p))
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
	text, ok := ref.Help(name)
	if !ok {
		return usageError{ref.Unknown(name)}
	}
	fmt.Fprint(stdout, termmd.Render(text, report.UseColor(*noColor, stdout)))
	return nil
}

// reference reads the modules' and the stdlib's docs once.
var reference = sync.OnceValues(func() (*help.Ref, error) { return help.Read(modules()) })

// cliPage is every command's -h, and the REPL's commands.
func cliPage() (string, error) {
	var b strings.Builder
	b.WriteString(help.Generated("the commands' flag sets (cmd/benchbook)"))
	b.WriteString("# The command line\n\n")
	b.WriteString("Flags go before or after the notebook path. `benchbook help NAME` prints what this page says of a command.\n")
	names := make([]string, 0, len(commands)+2)
	for name := range commands {
		names = append(names, name)
	}
	names = append(names, "help", "kernel install")
	sort.Strings(names)
	for _, name := range names {
		var out bytes.Buffer
		args := append(strings.Fields(name)[1:], "-h")
		cmd, ok := commands[strings.Fields(name)[0]]
		if name == "help" {
			cmd, ok = command{helpSummary, cmdHelp}, true // not helpCommand: an initialization cycle
		}
		if !ok {
			return "", fmt.Errorf("no command %s", name)
		}
		cmd.run(context.Background(), &out, &out, args) // -h: flag.ErrHelp, the usage written
		if out.Len() == 0 {
			return "", fmt.Errorf("benchbook %s -h wrote nothing", name)
		}
		fmt.Fprintf(&b, "\n## benchbook %s\n\n```\n%s\n```\n", name, strings.TrimRight(out.String(), "\n"))
	}
	b.WriteString("\n## The REPL's commands\n\n`benchbook repl nb.star` (and the Jupyter kernel, as `:name` or `%name`) takes these besides Starlark:\n\n")
	b.WriteString("| command | what it does |\n| --- | --- |\n")
	for _, c := range repl.Commands() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", strings.TrimSpace(c.Name+" "+c.Args), c.Help)
	}
	return b.String(), nil
}
