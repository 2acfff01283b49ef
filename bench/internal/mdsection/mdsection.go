// Package mdsection is the command line of bench's table generators: read
// a raw directory, print the tables or put them in a Markdown file's
// generated section.
package mdsection

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// Begin and End are the markers of the section that generator name owns.
func Begin(name string) string {
	return "<!-- BEGIN " + name + ": generated, do not edit by hand -->"
}

// End: see Begin.
func End(name string) string { return "<!-- END " + name + " -->" }

// Replace puts body between generator name's markers in path. A file
// without both markers, in order, is left alone: the generator does not
// guess where its tables go.
func Replace(path, name, body string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	begin, end := Begin(name), End(name)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q ... %q section", path, begin, end)
	}
	s = s[:i+len(begin)] + "\n" + body + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// Main is a generator's main: "name [-write FILE] [-section S] RAWDIR"
// prints what render makes of RAWDIR, or with -write replaces FILE's
// section: the generator's, or with -section its section S (a file may
// keep several runs' tables, each between markers of its own).
func Main(name string, render func(dir string) (string, error)) {
	write := flag.String("write", "", "Markdown file whose generated section (between the markers) is replaced")
	section := flag.String("section", "", "with -write: the generator's section of this name (markers \"BEGIN NAME SECTION\")")
	flag.Parse()
	if *section != "" {
		name += " " + *section
	}
	if flag.NArg() != 1 {
		fmt.Fprintf(os.Stderr, "usage: %s [-write bench/RESULTS.md] RAWDIR\n", name)
		os.Exit(2)
	}
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	body, err := render(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	if *write == "" {
		fmt.Print(body)
		return
	}
	if err := Replace(*write, name, body); err != nil {
		fail(err)
	}
}
