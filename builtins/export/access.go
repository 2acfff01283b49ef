package export

import (
	"fmt"
	"slices"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// Values exported come from other packages (runs, tables, experiments);
// they are read through Starlark so this package depends on their shape
// only.

// itemsOf returns the elements of an iterable (not a string), or v alone.
func itemsOf(v starlark.Value) []starlark.Value {
	if v == nil {
		return nil
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return []starlark.Value{v}
	}
	return slices.Collect(starlark.Elements(it))
}

// rowsOf returns the rows of a table (its .rows) or the items of a list.
func rowsOf(v starlark.Value) ([]starlark.Value, error) {
	if r := starval.Attr(v, "rows"); r != nil {
		v = r
	}
	switch v.(type) {
	case *starlark.List, starlark.Tuple:
		return itemsOf(v), nil
	}
	if _, ok := v.(starlark.Iterable); ok {
		if _, isMap := v.(starlark.Mapping); !isMap {
			return itemsOf(v), nil
		}
	}
	return nil, fmt.Errorf("want runs, an experiment, a table or a list of dicts, got %s", v.Type())
}

func textOf(v starlark.Value) string {
	if s, ok := starlark.AsString(v); ok {
		return s
	}
	return v.String()
}
