package display

import (
	"fmt"
	"slices"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/table"
)

// columnNames reads the columns argument: None, or a list/tuple of strings.
func columnNames(v starlark.Value) ([]string, error) {
	if v == starlark.None {
		return nil, nil
	}
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("want a list of names, got %s", v.Type())
	}
	names := make([]string, seq.Len())
	seen := map[string]bool{}
	for i := range names {
		s, ok := seq.Index(i).(starlark.String)
		if !ok {
			return nil, fmt.Errorf("name %d is %s, want a string", i, seq.Index(i).Type())
		}
		if seen[string(s)] {
			return nil, fmt.Errorf("duplicate column %q", string(s))
		}
		seen[string(s)] = true
		names[i] = string(s)
	}
	return names, nil
}

// tableFrom builds a table from what table() accepts; cols (nil when not
// given) selects and orders the columns.
func tableFrom(rows starlark.Value, cols []string) (*table.Table, error) {
	switch x := rows.(type) {
	case *table.Table:
		return selectColumns(x, cols)
	case *starlark.Dict:
		return fromColumns(x, cols)
	case starlark.Iterable:
		return fromRows(x, cols)
	}
	return nil, fmt.Errorf("rows: want a list of dicts, a list of lists, a dict of columns or a table, got %s", rows.Type())
}

func selectColumns(t *table.Table, cols []string) (*table.Table, error) {
	if cols == nil {
		return table.New(t.Columns(), t.Rows()), nil
	}
	idx := make([]int, len(cols))
	for k, c := range cols {
		if idx[k] = t.ColumnIndex(c); idx[k] < 0 {
			return nil, fmt.Errorf("columns: no column %q in the table", c)
		}
	}
	rows := make([][]starlark.Value, len(t.Rows()))
	for i, r := range t.Rows() {
		rows[i] = make([]starlark.Value, len(cols))
		for k, j := range idx {
			rows[i][k] = r[j]
		}
	}
	return table.New(cols, rows), nil
}

// fromColumns reads a dict of column name -> list of values.
func fromColumns(d *starlark.Dict, cols []string) (*table.Table, error) {
	data := map[string][]starlark.Value{}
	var order []string
	n := -1
	for _, kv := range d.Items() {
		name, ok := kv[0].(starlark.String)
		if !ok {
			return nil, fmt.Errorf("rows: column name %s is %s, want a string", kv[0], kv[0].Type())
		}
		vals, err := listOf(kv[1])
		if err != nil {
			return nil, fmt.Errorf("rows: column %q: %w", string(name), err)
		}
		if n >= 0 && len(vals) != n {
			return nil, fmt.Errorf("rows: column %q has %d values, column %q has %d", string(name), len(vals), order[0], n)
		}
		n = len(vals)
		data[string(name)] = vals
		order = append(order, string(name))
	}
	if cols == nil {
		cols = order
	}
	rows := make([][]starlark.Value, max(n, 0))
	for i := range rows {
		rows[i] = make([]starlark.Value, len(cols))
		for k, c := range cols {
			vals, ok := data[c]
			if !ok {
				return nil, fmt.Errorf("columns: no column %q in rows", c)
			}
			rows[i][k] = vals[i]
		}
	}
	return table.New(cols, rows), nil
}

// fromRows reads a sequence of dicts or of lists/tuples.
func fromRows(seq starlark.Iterable, cols []string) (*table.Table, error) {
	items, err := listOf(seq)
	if err != nil {
		return nil, fmt.Errorf("rows: %w", err)
	}
	if len(items) == 0 {
		return table.New(cols, nil), nil
	}
	if _, ok := items[0].(*starlark.Dict); ok {
		return fromDictRows(items, cols)
	}
	if cols == nil {
		return nil, fmt.Errorf("rows of %s need columns = [...]", items[0].Type())
	}
	rows := make([][]starlark.Value, len(items))
	for i, it := range items {
		row, err := listOf(it)
		if err != nil {
			return nil, fmt.Errorf("row %d: want a dict, list or tuple like row 0, got %s", i, it.Type())
		}
		if len(row) != len(cols) {
			return nil, fmt.Errorf("row %d has %d values for %d columns", i, len(row), len(cols))
		}
		rows[i] = row
	}
	return table.New(cols, rows), nil
}

func fromDictRows(items []starlark.Value, cols []string) (*table.Table, error) {
	fixed := cols != nil
	index := map[string]int{}
	for k, c := range cols {
		index[c] = k
	}
	var rows [][]starlark.Value
	for i, it := range items {
		d, ok := it.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("row %d: want a dict like row 0, got %s", i, it.Type())
		}
		row := make([]starlark.Value, len(cols), len(cols)+d.Len())
		for _, kv := range d.Items() {
			name, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("row %d: key %s is %s, want a string", i, kv[0], kv[0].Type())
			}
			k, ok := index[string(name)]
			if !ok {
				if fixed {
					continue
				}
				k = len(cols)
				index[string(name)] = k
				cols = append(cols, string(name))
				row = append(row, nil)
			}
			row[k] = kv[1]
		}
		rows = append(rows, row)
	}
	return table.New(cols, rows), nil
}

// listOf returns the elements of a list, tuple or other iterable.
func listOf(v starlark.Value) ([]starlark.Value, error) {
	if _, ok := v.(starlark.String); ok {
		return nil, fmt.Errorf("want a list, got string")
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("want a list, got %s", v.Type())
	}
	return slices.Collect(starlark.Elements(it)), nil
}
