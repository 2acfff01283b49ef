package runtime

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// parseCell parses a code cell on its own, as the portion of the notebook
// file that starts at the cell's first line, so that every position is the
// file's own line:col. (It used to pad the body with a newline per line
// above it, which the scanner read one by one: a cost growing with the
// square of the notebook's length, a third of a 3,000-cell rerun.)
// Resolving mutates the tree, so each analysis or execution parses afresh
// (it is cheap).
func parseCell(path string, c *CellDef) (*syntax.File, error) {
	f, err := fileOptions.Parse(path, syntax.FilePortion{Content: []byte(c.Body), FirstLine: int32(c.Line), FirstCol: 1}, 0)
	if err != nil {
		return nil, cellError(c, atToken(err, c.Body, c.Line))
	}
	return f, nil
}

// atToken moves a syntax error that go.starlark.net's scanner reports just
// past the offending text (a stray backslash, an old-style octal literal)
// back to where that text starts, the column every other error points at.
// src is the cell's body, whose first line is the file's line first.
func atToken(err error, src string, first int) error {
	var se syntax.Error
	if !errors.As(err, &se) || se.Pos.Col <= 1 {
		return err
	}
	lines := strings.Split(src, "\n")
	i := int(se.Pos.Line) - first
	if i < 0 || i >= len(lines) {
		return err
	}
	line := []rune(lines[i])
	col := min(int(se.Pos.Col), len(line)+1)
	switch {
	case se.Msg == "stray backslash in program":
		col--
	case strings.HasPrefix(se.Msg, "obsolete form of octal literal"):
		for col > 1 && unicode.IsDigit(line[col-2]) {
			col--
		}
	default:
		return err
	}
	name := se.Pos.Filename()
	se.Pos = syntax.MakePosition(&name, se.Pos.Line, int32(col))
	return se
}

// cellError prefixes err with the cell's name, keeping its position first.
func cellError(c *CellDef, err error) error {
	return fmt.Errorf("%w (in cell %s)", err, c.Name)
}

// analyse finds what a code cell reads from other cells and what it defines.
func analyse(path string, c *CellDef) error {
	f, err := parseCell(path, c)
	if err != nil {
		return err
	}
	c.srcHash = hashString(normalize(c.Body))
	free := map[string]bool{}
	c.readPos = map[string]syntax.Position{}
	c.paramDefs = map[string]starlark.Value{}
	if err := resolve.File(f, func(string) bool { return true }, starlark.Universe.Has); err != nil {
		return cellError(c, err)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Ident:
			if b, ok := n.Binding.(*resolve.Binding); ok && b.Scope == resolve.Predeclared {
				if !free[n.Name] {
					free[n.Name] = true
					c.readPos[n.Name] = n.NamePos
				}
			}
		case *syntax.LoadStmt:
			c.Loads = append(c.Loads, n.Module.Value.(string))
		case *syntax.CallExpr:
			if name := paramName(n); name != "" {
				c.Params = append(c.Params, name)
				if _, seen := c.paramDefs[name]; !seen {
					c.paramDefs[name] = literalDefault(n)
				} else if d := literalDefault(n); d == nil || c.paramDefs[name] == nil || d.String() != c.paramDefs[name].String() {
					c.paramDefs[name] = nil
				}
			}
		}
		return true
	})
	c.Reads = sortedKeys(free)
	loopOnly := loopVariables(f)
	for _, b := range f.Module.(*resolve.Module).Globals {
		if !strings.HasPrefix(b.First.Name, "_") && !loopOnly[b.First.Name] {
			c.Defines = append(c.Defines, b.First.Name)
		} else {
			c.private = append(c.private, b.First.Name)
		}
	}
	sort.Strings(c.Defines)
	c.Params = dedupe(c.Params)
	c.flow = secretFlows(f)
	c.lint = lostDisplays(f)
	return nil
}

// lostDisplays finds top-level calls that make something to display (a
// figure, a table, Markdown, an export) as an expression statement other
// than the cell's last: their value is dropped, as in Jupyter, which is
// rarely what the author meant.
func lostDisplays(f *syntax.File) []string {
	var out []string
	for i, stmt := range f.Stmts {
		es, ok := stmt.(*syntax.ExprStmt)
		if !ok || i == len(f.Stmts)-1 {
			continue
		}
		call, ok := es.X.(*syntax.CallExpr)
		if !ok {
			continue
		}
		if name := displayCall(call.Fn); name != "" {
			pos, _ := es.Span()
			out = append(out, fmt.Sprintf("line %d: the value of %s(...) is not displayed: only a cell's last expression is; use show(a, b, ...)", pos.Line, name))
		}
	}
	return out
}

// displayCall names fn if it is one of the builtins whose result is only
// worth displaying: plot.*, export.*, table, md.
func displayCall(fn syntax.Expr) string {
	switch fn := fn.(type) {
	case *syntax.Ident:
		if fn.Name == "table" || fn.Name == "md" {
			return fn.Name
		}
	case *syntax.DotExpr:
		if x, ok := fn.X.(*syntax.Ident); ok && (x.Name == "plot" || x.Name == "export") {
			return x.Name + "." + fn.Name.Name
		}
	}
	return ""
}

// paramName returns NAME for a call param("NAME", ...), else "".
func paramName(call *syntax.CallExpr) string {
	id, ok := call.Fn.(*syntax.Ident)
	if !ok || id.Name != "param" || len(call.Args) == 0 {
		return ""
	}
	lit, ok := call.Args[0].(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return ""
	}
	return lit.Value.(string)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// loopVariables returns the names a cell binds only as top-level for-loop
// variables: they stay local to the cell, so two cells may both loop with
// "for x in ...". A name also assigned or defined elsewhere is a global.
func loopVariables(f *syntax.File) map[string]bool {
	loop, other := map[string]bool{}, map[string]bool{}
	var bind func(x syntax.Expr, into map[string]bool)
	bind = func(x syntax.Expr, into map[string]bool) {
		switch x := x.(type) {
		case *syntax.Ident:
			into[x.Name] = true
		case *syntax.TupleExpr:
			for _, e := range x.List {
				bind(e, into)
			}
		case *syntax.ListExpr:
			for _, e := range x.List {
				bind(e, into)
			}
		case *syntax.ParenExpr:
			bind(x.X, into)
		}
	}
	var visit func(stmts []syntax.Stmt)
	visit = func(stmts []syntax.Stmt) {
		for _, st := range stmts {
			switch st := st.(type) {
			case *syntax.ForStmt:
				bind(st.Vars, loop)
				visit(st.Body)
			case *syntax.WhileStmt:
				visit(st.Body)
			case *syntax.IfStmt:
				visit(st.True)
				visit(st.False)
			case *syntax.AssignStmt:
				bind(st.LHS, other)
			case *syntax.DefStmt:
				other[st.Name.Name] = true
			}
		}
	}
	visit(f.Stmts)
	for name := range other {
		delete(loop, name)
	}
	return loop
}
