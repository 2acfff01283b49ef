package table

import (
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/redact"
)

var _ redact.Redacter = (*Table)(nil)

// Redacted hides the secrets of a table on its way to a record or the
// cache: a column whose name says secret (password, token) is masked whole,
// any other cell as text (a DSN's password).
func (t *Table) Redacted() (starlark.Value, bool) {
	cols := make([]string, len(t.columns))
	changed := false
	for j, c := range t.columns {
		cols[j] = redact.String(c)
		changed = changed || cols[j] != c
	}
	rows := make([][]starlark.Value, len(t.rows))
	for i, r := range t.rows {
		rows[i] = make([]starlark.Value, len(r))
		for j, v := range r {
			var c bool
			rows[i][j], c = redact.Field(t.columns[j], v)
			changed = changed || c
		}
	}
	if !changed {
		return t, false
	}
	return New(cols, rows), true
}
