// Package help is the reference of the builtins a notebook sees, read from
// the modules' Docs and the stdlib's docstrings: benchbook help and :help
// print it, the kernel's inspection shows it, docs/reference is its pages.
package help

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/termmd"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/refdoc"
	"github.com/benchbook/benchbook/stdlib"
	"go.starlark.net/starlark"
)

// A Ref is the whole reference of the builtins a notebook sees: the pages
// of the modules (their Docs), then the stdlib's (its docstrings).
type Ref struct {
	Pages []*refdoc.Page
}

// Read reads the reference of the modules (their Docs) and of the
// stdlib (its docstrings).
func Read(modules []runtime.Module) (*Ref, error) {
	r := &Ref{}
	for _, m := range append([]runtime.Module{runtime.Core()}, modules...) {
		p, err := refdoc.Parse(m.Name, m.Docs)
		if err != nil {
			return nil, fmt.Errorf("the %s module's reference: %w", m.Name, err)
		}
		r.Pages = append(r.Pages, p)
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
		r.Pages = append(r.Pages, p)
	}
	return r, nil
}

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

// Summary is a page's title without its module's name: "load generation".
func Summary(p *refdoc.Page) string {
	_, after, ok := strings.Cut(p.Title, ": ")
	if !ok {
		return p.Title
	}
	return after
}

// Page is the page of a module ("workload") or stdlib file ("abab.star",
// "@std/abab.star").
func (r *Ref) Page(name string) *refdoc.Page {
	for _, p := range r.Pages {
		if p.Name == name || p.Name == "@std/"+name {
			return p
		}
	}
	return nil
}

// Entry is the page and section that document a builtin; a member of a
// module documented as a whole (json.encode: go.starlark.net's json) has
// its module's.
func (r *Ref) Entry(name string) (*refdoc.Page, *refdoc.Section) {
	for _, p := range r.Pages {
		if s := p.Entry(name); s != nil {
			return p, s
		}
	}
	if i := strings.LastIndex(name, "."); i > 0 {
		return r.Entry(name[:i])
	}
	return nil, nil
}

// Help is the Markdown benchbook help and :help print for name: a
// builtin's entry, a module's page, or the page of the stdlib module that
// defines a design (whose docstring documents it).
func (r *Ref) Help(name string) (string, bool) {
	if p := r.Page(name); p != nil {
		return p.Source, true
	}
	p, s := r.Entry(name)
	switch {
	case s == nil:
		return "", false
	case strings.HasPrefix(p.Name, "@std/"):
		return p.Source, true
	}
	return s.Markdown(), true
}

// Unknown says that no builtin is named name, and which are near it: those
// whose last part is name (http: workload.http), else those containing it.
func (r *Ref) Unknown(name string) string {
	var last, near []string
	for _, p := range r.Pages {
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

// BuiltinDoc is a builtin's entry in the reference (its signature,
// arguments, errors and example) as text, or "".
func (r *Ref) BuiltinDoc(name string) string {
	if _, s := r.Entry(name); s != nil {
		return termmd.Render(s.Body, false)
	}
	return ""
}

// StdlibDoc is the reference page of the stdlib module that defines fn
// (abab is documented by @std/abab.star's docstring), or "".
func (r *Ref) StdlibDoc(fn *starlark.Function) string {
	if p := r.Page(fn.Position().Filename()); p != nil && p.Entry(fn.Name()) != nil {
		return termmd.Render(p.Source, false)
	}
	return ""
}
