// Package display gives notebooks md(), table() and show(): what a record
// shows of a cell. They put things in the record besides the last expression
// of a cell:
//
//	md(text)                   emits Markdown (dedented); returns None
//	table(rows, columns=None)  returns a table value (displayed when it is a
//	                           cell's last expression or passed to show)
//	show(*values)              emits each value as the record displays it; returns None
//
// A table is built from a list of dicts (columns from the first row's keys,
// in order, extended by later keys), a list of lists or tuples with
// columns, a dict of column -> list, or another table (columns selects and
// orders). Its Starlark surface:
//
//	len(t), t[i]            row i as a dict
//	for row in t            rows as dicts
//	t.rows                  list of dicts
//	t.columns               list of column names
//	t.column(name)          list of the column's values
//	t.csv()                 the table as CSV text
//	t == u                  same columns in the same order, equal cells
//	                        (by content, whoever built them; a table of
//	                        scalars is hashable)
package display

import (
	_ "embed"
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/markdown"
	"github.com/benchbook/benchbook/builtins/internal/table"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Table and Markdown are the values table() and md() return. They are
// defined below the modules (builtins/internal/table, .../markdown), since
// other modules make them too (a query's rows, a verdict's text); these
// names are for code outside builtins/, which cannot import those.
type (
	Table    = table.Table
	Markdown = markdown.Markdown
)

// NewTable is table.New: a table of the given columns.
func NewTable(columns []string, rows [][]starlark.Value) *Table { return table.New(columns, rows) }

// Module is the display module: md, table and show, and the decoders of
// the tables and Markdown that cells store.
func Module() runtime.Module {
	return runtime.Module{
		Name: "display",
		Globals: starlark.StringDict{
			"md":    starlark.NewBuiltin("md", md),
			"table": starlark.NewBuiltin("table", makeTable),
			"show":  starlark.NewBuiltin("show", show),
		},
		Decoders: codec.Types{"table": table.Decode, "markdown": markdown.Decode},
		Docs:     docs,
	}
}

// docs is the module's reference: benchbook help md, the kernel's inspect
// and docs/reference/display.md read it.
//
//go:embed reference.md
var docs string

// md(text) emits text as Markdown, with common indentation removed so it
// can be written as an indented triple-quoted string.
func md(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text); err != nil {
		return nil, err
	}
	runtime.Emit(th, markdown.Markdown(dedent(text)))
	return starlark.None, nil
}

// table(rows, columns = None) returns a table.
func makeTable(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var rows, columns starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "rows", &rows, "columns?", &columns); err != nil {
		return nil, err
	}
	cols, err := columnNames(columns)
	if err != nil {
		return nil, fmt.Errorf("%s: columns: %w", b.Name(), err)
	}
	t, err := tableFrom(rows, cols)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return t, nil
}

// show(*values) emits each value in the record.
func show(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword argument %s", b.Name(), kwargs[0][0])
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: want at least one value", b.Name())
	}
	for _, v := range args {
		runtime.Emit(th, v)
	}
	return starlark.None, nil
}

// dedent removes the leading blank line and the indentation common to all
// non-blank lines, like Python's textwrap.dedent.
func dedent(s string) string {
	lines := strings.Split(strings.TrimLeft(s, "\n"), "\n")
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = indent, false
			continue
		}
		for !strings.HasPrefix(indent, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
		if strings.TrimSpace(lines[i]) == "" {
			lines[i] = ""
		}
	}
	return strings.TrimRight(strings.Join(lines, "\n"), " \t\n") + "\n"
}
