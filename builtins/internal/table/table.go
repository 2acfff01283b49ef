// Package table is the table value: rows of values under named columns,
// which table(), the backends' queries, sweeps and decision tables make,
// and which the record shows (HTML, Markdown, JSON, a CSV download).
package table

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// Table is rows of values under named columns: the result of table(...),
// of sweeps and decision tables. It is immutable.
type Table struct {
	columns []string
	rows    [][]starlark.Value // each row has len(columns) values; None where missing
}

var (
	_ starlark.Indexable  = (*Table)(nil)
	_ starlark.Iterable   = (*Table)(nil)
	_ starlark.HasAttrs   = (*Table)(nil)
	_ starlark.Comparable = (*Table)(nil)
	_ record.HTMLer       = (*Table)(nil)
	_ record.Markdowner   = (*Table)(nil)
	_ record.JSONer       = (*Table)(nil)
	_ record.Downloader   = (*Table)(nil)
	_ codec.Marshaler     = (*Table)(nil)
)

// New returns a table of the given columns. Short rows are padded with
// None, long ones cut to the columns.
func New(columns []string, rows [][]starlark.Value) *Table {
	t := &Table{columns: append([]string(nil), columns...), rows: make([][]starlark.Value, len(rows))}
	for i, r := range rows {
		row := make([]starlark.Value, len(columns))
		for j := range row {
			if j < len(r) && r[j] != nil {
				row[j] = r[j]
			} else {
				row[j] = starlark.None
			}
		}
		t.rows[i] = row
	}
	return t
}

// Columns returns the column names.
func (t *Table) Columns() []string { return append([]string(nil), t.columns...) }

// Rows returns the rows; the caller must not modify them.
func (t *Table) Rows() [][]starlark.Value { return t.rows }

func (t *Table) Type() string         { return "table" }
func (t *Table) Truth() starlark.Bool { return len(t.rows) > 0 }
func (t *Table) Len() int             { return len(t.rows) }

// CompareSameType makes == compare content: the same columns in the same
// order and equal cells row by row, so two query answers with the same rows
// are equal whoever built them (equivalent() rests on it). Tables have no
// order.
func (t *Table) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	if op != syntax.EQL && op != syntax.NEQ {
		return starval.EqualOnly(op, false, t, y)
	}
	eq, err := t.equal(y.(*Table), depth)
	if err != nil {
		return false, err
	}
	return starval.EqualOnly(op, eq, t, y)
}

func (t *Table) equal(u *Table, depth int) (bool, error) {
	if t == u {
		return true, nil
	}
	if !slices.Equal(t.columns, u.columns) || len(t.rows) != len(u.rows) {
		return false, nil
	}
	for i, row := range t.rows {
		for j, v := range row {
			if eq, err := starlark.EqualDepth(v, u.rows[i][j], depth-1); err != nil || !eq {
				return false, err
			}
		}
	}
	return true, nil
}

// Hash is consistent with ==: it mixes the columns and every cell's own
// hash (1 and 1.0 hash alike), so a table of scalars can be a dict key and
// one holding a list is unhashable, as a tuple holding one is.
func (t *Table) Hash() (uint32, error) {
	var h uint32 = 2166136261
	mix := func(x uint32) { h = (h ^ x) * 16777619 }
	for _, c := range t.columns {
		x, _ := starlark.String(c).Hash()
		mix(x)
	}
	for _, row := range t.rows {
		for j, v := range row {
			x, err := v.Hash()
			if err != nil {
				return 0, fmt.Errorf("unhashable type: table (column %q holds a %s)", t.columns[j], v.Type())
			}
			mix(x)
		}
	}
	return h, nil
}

// Freeze freezes the values inside (a table itself never changes).
func (t *Table) Freeze() {
	for _, r := range t.rows {
		for _, v := range r {
			v.Freeze()
		}
	}
}

// String is an aligned text table, numbers on the right.
func (t *Table) String() string { return t.text() }

// Index returns row i as a new dict.
func (t *Table) Index(i int) starlark.Value { return t.rowDict(i) }

func (t *Table) rowDict(i int) *starlark.Dict {
	d := starlark.NewDict(len(t.columns))
	for j, c := range t.columns {
		_ = d.SetKey(starlark.String(c), t.rows[i][j])
	}
	return d
}

// Iterate yields the rows as dicts.
func (t *Table) Iterate() starlark.Iterator { return &rowIter{t: t} }

type rowIter struct {
	t *Table
	i int
}

func (it *rowIter) Next(p *starlark.Value) bool {
	if it.i >= len(it.t.rows) {
		return false
	}
	*p = it.t.rowDict(it.i)
	it.i++
	return true
}

func (it *rowIter) Done() {}

func (t *Table) AttrNames() []string { return []string{"column", "columns", "csv", "rows"} }

func (t *Table) Attr(name string) (starlark.Value, error) {
	switch name {
	case "rows":
		rows := make([]starlark.Value, len(t.rows))
		for i := range rows {
			rows[i] = t.rowDict(i)
		}
		return starlark.NewList(rows), nil
	case "columns":
		cols := make([]starlark.Value, len(t.columns))
		for i, c := range t.columns {
			cols[i] = starlark.String(c)
		}
		return starlark.NewList(cols), nil
	case "column":
		return starlark.NewBuiltin("column", t.columnMethod), nil
	case "csv":
		return starlark.NewBuiltin("csv", t.csvMethod), nil
	}
	return nil, nil
}

// column(name) returns the values of one column as a list.
func (t *Table) columnMethod(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackArgs("table.column", args, kwargs, "name", &name); err != nil {
		return nil, err
	}
	j := t.ColumnIndex(name)
	if j < 0 {
		return nil, fmt.Errorf("table.column: no column %q (columns: %s)", name, strings.Join(t.columns, ", "))
	}
	vals := make([]starlark.Value, len(t.rows))
	for i, r := range t.rows {
		vals[i] = r[j]
	}
	return starlark.NewList(vals), nil
}

// ColumnIndex is the index of the named column, -1 when there is none.
func (t *Table) ColumnIndex(name string) int {
	for j, c := range t.columns {
		if c == name {
			return j
		}
	}
	return -1
}

// csv() returns the table as CSV text.
func (t *Table) csvMethod(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs("table.csv", args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(t.CSV()), nil
}

// CSV returns the table as CSV with full-precision numbers.
func (t *Table) CSV() string {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(t.columns)
	rec := make([]string, len(t.columns))
	for _, r := range t.rows {
		for j, v := range r {
			rec[j] = rawText(v)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	return buf.String()
}

// rawText is a value for data export: exact numbers, strings unquoted.
func rawText(v starlark.Value) string {
	switch x := v.(type) {
	case starlark.NoneType:
		return ""
	case starlark.String:
		return string(x)
	case starlark.Float:
		return strconv.FormatFloat(float64(x), 'g', -1, 64)
	}
	return v.String()
}

// Downloads offers the table as CSV.
func (t *Table) Downloads() []record.Download {
	return []record.Download{{Name: "table.csv", MIME: "text/csv", Data: []byte(t.CSV())}}
}

// JSON is {"columns": [...], "rows": [[...], ...]} with numbers as numbers.
func (t *Table) JSON() any {
	rows := make([][]any, len(t.rows))
	for i, r := range t.rows {
		rows[i] = make([]any, len(r))
		for j, v := range r {
			rows[i][j] = jsonCell(v)
		}
	}
	return map[string]any{"columns": t.Columns(), "rows": rows}
}

func jsonCell(v starlark.Value) any {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil
	case starlark.Bool:
		return bool(x)
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i
		}
	case starlark.Float:
		if f, ok := finiteFloat(x); ok {
			return f
		}
	case starlark.String:
		return string(x)
	}
	return v.String()
}

// MarshalValue stores the columns and rows through the codec.
func (t *Table) MarshalValue() ([]byte, error) {
	cols := make([]starlark.Value, len(t.columns))
	for i, c := range t.columns {
		cols[i] = starlark.String(c)
	}
	rows := make([]starlark.Value, len(t.rows))
	for i, r := range t.rows {
		rows[i] = starlark.Tuple(r)
	}
	data, err := codec.Encode(starlark.Tuple{starlark.Tuple(cols), starlark.Tuple(rows)})
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	return data, nil
}

// Decode rebuilds a stored table; types decode its cells (a run, a
// comparison: any module's values).
func Decode(data []byte, types codec.Types) (starlark.Value, error) {
	v, err := codec.Decode(data, types)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	parts, ok := v.(starlark.Tuple)
	if !ok || len(parts) != 2 {
		return nil, fmt.Errorf("table: bad encoding")
	}
	cols, ok1 := parts[0].(starlark.Tuple)
	rows, ok2 := parts[1].(starlark.Tuple)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("table: bad encoding")
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		s, ok := c.(starlark.String)
		if !ok {
			return nil, fmt.Errorf("table: bad column name")
		}
		names[i] = string(s)
	}
	out := make([][]starlark.Value, len(rows))
	for i, r := range rows {
		row, ok := r.(starlark.Tuple)
		if !ok || len(row) != len(names) {
			return nil, fmt.Errorf("table: bad row %d", i)
		}
		out[i] = row
	}
	return New(names, out), nil
}
