package refdoc

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"go.starlark.net/syntax"
)

// FromStarlark reads the reference of a Starlark module (the stdlib's
// "@std/abab.star") from its source, so a design's documentation is its
// docstrings: the module's docstring is the page (its first line the
// title, the rest the intro, Markdown), and each name the module exports
// (a top-level def or assignment whose name does not start with "_") is
// an entry. A def's signature is its own def line and its body its
// docstring; another value's signature is the lines of the module's
// docstring that start with its name ("assert.eq(a, b, msg = \"\")").
func FromStarlark(name string, src []byte, opts *syntax.FileOptions) (*Page, error) {
	f, err := opts.Parse(name, src, syntax.RetainComments)
	if err != nil {
		return nil, err
	}
	doc := docstring(f.Stmts)
	if doc == "" {
		return nil, fmt.Errorf("%s: the module has no docstring", name)
	}
	title, intro, _ := strings.Cut(doc, "\n")
	base := strings.TrimSuffix(path.Base(name), ".star")
	title = strings.TrimPrefix(strings.TrimSpace(title), base+": ") // "abab: alternate the arms ..."
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s\n\n```python fragment\nload(%q, %s)\n```\n", name, title, name, loadNames(f.Stmts))
	if intro = strings.Trim(intro, "\n"); intro != "" {
		b.WriteString("\n" + intro + "\n")
	}
	for _, stmt := range f.Stmts {
		entry, sig, body := exported(stmt, src)
		if entry == "" {
			continue
		}
		if sig == "" {
			sig = docLines(intro, entry)
		}
		fmt.Fprintf(&b, "\n## %s\n\n```\n%s\n```\n", entry, sig)
		if body != "" {
			b.WriteString("\n" + body + "\n")
		}
	}
	return Parse(name, b.String())
}

// loadNames are the module's exported names as a load statement lists
// them: "abab", or "soak", "at_most", ...
func loadNames(stmts []syntax.Stmt) string {
	var names []string
	for _, stmt := range stmts {
		if name, _, _ := exported(stmt, nil); name != "" {
			names = append(names, strconv.Quote(name))
		}
	}
	return strings.Join(names, ", ")
}

// exported gives a top-level statement's exported name, with a def's
// signature and docstring.
func exported(stmt syntax.Stmt, src []byte) (name, sig, doc string) {
	switch s := stmt.(type) {
	case *syntax.DefStmt:
		if strings.HasPrefix(s.Name.Name, "_") {
			return "", "", ""
		}
		params := make([]string, len(s.Params))
		for i, p := range s.Params {
			params[i] = text(src, p)
		}
		return s.Name.Name, s.Name.Name + "(" + strings.Join(params, ", ") + ")", docstring(s.Body)
	case *syntax.AssignStmt:
		if id, ok := s.LHS.(*syntax.Ident); ok && !strings.HasPrefix(id.Name, "_") {
			return id.Name, "", ""
		}
	}
	return "", "", ""
}

// docstring is the text of a leading string literal, dedented.
func docstring(stmts []syntax.Stmt) string {
	if len(stmts) == 0 {
		return ""
	}
	e, ok := stmts[0].(*syntax.ExprStmt)
	if !ok {
		return ""
	}
	lit, ok := e.X.(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return ""
	}
	return dedent(lit.Value.(string))
}

// dedent removes the indent the lines after the first share, as Python's
// inspect.cleandoc does.
func dedent(s string) string {
	ls := strings.Split(s, "\n")
	indent := -1
	for _, l := range ls[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i := 1; i < len(ls) && indent > 0; i++ {
		if len(ls[i]) >= indent {
			ls[i] = ls[i][indent:]
		} else {
			ls[i] = strings.TrimLeft(ls[i], " ")
		}
	}
	return strings.TrimSpace(strings.Join(ls, "\n"))
}

// docLines are the lines of doc that start, after their indent, with
// name and a dot or a parenthesis: a value's signatures in its module's
// docstring.
func docLines(doc, name string) string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, name+".") || strings.HasPrefix(t, name+"(") {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// text is the source of a node, one line.
func text(src []byte, n syntax.Node) string {
	start, end := n.Span()
	from, to := offset(src, start), offset(src, end)
	if from < 0 || to < from {
		return ""
	}
	return strings.Join(strings.Fields(string(src[from:to])), " ")
}

// offset is the byte offset of a position (lines and columns count from 1,
// columns in runes, as go.starlark.net counts them).
func offset(src []byte, p syntax.Position) int {
	line, i := int32(1), 0
	for line < p.Line && i < len(src) {
		if src[i] == '\n' {
			line++
		}
		i++
	}
	if line != p.Line {
		return -1
	}
	rest := []rune(string(src[i:]))
	col := int(p.Col) - 1
	if col > len(rest) {
		return -1
	}
	return i + len(string(rest[:col]))
}
