// Package refdoc reads benchbook's reference: the Markdown a builtin module
// carries on its value (runtime.Module.Docs: each builtins package embeds
// its reference.md) and the docstrings of the stdlib's Starlark modules.
// Each builtin is documented once, there; benchbook help, the REPL's
// :help, the kernel's inspect and the pages of docs/reference (written by
// go generate ./cmd/benchbook) all read it through this package.
//
// A module's Markdown is one page:
//
//	# workload: load generation and what it measured    the title
//	Markdown ...                                        the intro
//	## workload.http                                    an entry: its heading names the builtin
//	```                                                 its signature: the entry's first code
//	workload.http(url, ...) -> run                      block with no language
//	```
//	Markdown ...                                        what it does, its arguments, what it
//	                                                    returns, its errors
//	```python                                           an example
//	r = workload.http(...)
//	```
//	## Run attributes                                   a heading that is no name: a section of prose
//
// A heading may name several builtins, "## gocode.file, gocode.load": the
// names after the first are aliases. Links are relative to docs/reference/,
// where the page is published.
//
// An example is a code block in Python's syntax (Starlark's, as GitHub
// highlights it) that the docs test runs: as a snippet in one cell, or as a
// whole notebook when it has "# %%" lines. Words after "python" say what it
// needs: "fragment" is part of a larger notebook (parsed, not run),
// "needs=postgres" runs where PostgreSQL is. A line ending in
// "# error: MESSAGE" must fail with an error that contains MESSAGE.
package refdoc

import (
	"fmt"
	"regexp"
	"strings"
)

// A Page is the reference of one module.
type Page struct {
	Name     string // "workload", "@std/abab.star"
	Title    string // the first heading's text
	Intro    string // the Markdown before the first section
	Sections []*Section
	Source   string // the whole Markdown, as written
}

// A Section is one "## " part of a page: an entry when its heading names
// builtins, prose otherwise.
type Section struct {
	Heading   string
	Names     []string // the builtins it documents, the first the main name; none for prose
	Signature string   // an entry's first code block with no language
	Body      string   // the Markdown under the heading, the signature included
	Examples  []Example
}

// An Example is one code block of Python's syntax.
type Example struct {
	Code     string
	Line     int      // of the code's first line in the page's Markdown
	Fragment bool     // part of a larger notebook: parsed, not run
	Needs    []string // what it runs on besides benchbook: "postgres", "docker", ...
}

// entryHeading is a heading that names builtins: "workload.http",
// "gocode.file, gocode.load".
var entryHeading = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*(, [a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*)*$`)

// Parse reads a module's Markdown.
func Parse(name, md string) (*Page, error) {
	p := &Page{Name: name, Source: md}
	ls := lines(md)
	type span struct{ from, to int } // lines [from, to) of a section's body
	var spans []span
	intro := span{0, len(ls)}
	for i, l := range ls {
		switch {
		case l.fenced:
		case strings.HasPrefix(l.text, "# ") && p.Title == "" && len(spans) == 0 && blank(ls[:i]):
			p.Title = strings.TrimSpace(l.text[2:])
			intro.from = i + 1
		case strings.HasPrefix(l.text, "## "):
			if len(spans) == 0 {
				intro.to = i
			} else {
				spans[len(spans)-1].to = i
			}
			sec := &Section{Heading: strings.TrimSpace(l.text[3:])}
			if entryHeading.MatchString(sec.Heading) {
				sec.Names = strings.Split(sec.Heading, ", ")
			}
			p.Sections = append(p.Sections, sec)
			spans = append(spans, span{i + 1, len(ls)})
		}
	}
	if p.Title == "" {
		return nil, fmt.Errorf("%s: the reference has no title (a first line \"# ...\")", name)
	}
	p.Intro = join(ls[intro.from:intro.to])
	blocks := Blocks(md)
	for k, s := range p.Sections {
		sp := spans[k]
		s.Body = join(ls[sp.from:sp.to])
		for _, b := range blocks {
			if fence := b.Line - 2; fence < sp.from || fence >= sp.to { // Line counts from 1, after the fence
				continue
			}
			switch {
			case b.Info == "" && s.Signature == "" && len(s.Names) > 0:
				s.Signature = b.Code
			case b.Lang() == "python":
				s.Examples = append(s.Examples, b.Example())
			}
		}
	}
	return p, nil
}

func blank(ls []line) bool {
	for _, l := range ls {
		if strings.TrimSpace(l.text) != "" {
			return false
		}
	}
	return true
}

func join(ls []line) string {
	texts := make([]string, len(ls))
	for i, l := range ls {
		texts[i] = l.text
	}
	return strings.Trim(strings.Join(texts, "\n"), "\n")
}

// Entry returns the section that documents name, or nil.
func (p *Page) Entry(name string) *Section {
	for _, s := range p.Sections {
		for _, n := range s.Names {
			if n == name {
				return s
			}
		}
	}
	return nil
}

// Entries are the sections that document builtins, in page order.
func (p *Page) Entries() []*Section {
	var out []*Section
	for _, s := range p.Sections {
		if len(s.Names) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// Examples are every example of the page: the intro's, then the sections'.
func (p *Page) Examples() []Example {
	var out []Example
	for _, b := range Blocks(p.Source) {
		if b.Lang() == "python" {
			out = append(out, b.Example())
		}
	}
	return out
}

// Synopsis is the first line of an entry's signature, "workload.http(url,
// method = "GET", headers = {}, body = None, request = None,".
func (s *Section) Synopsis() string {
	first, _, _ := strings.Cut(s.Signature, "\n")
	return first
}

// Markdown is the entry as a page shows it, under its own heading.
func (s *Section) Markdown() string {
	return "## " + s.Heading + "\n\n" + s.Body + "\n"
}
