package plot

import (
	"fmt"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// The values plotted come from other packages (runs, histograms,
// comparisons, tables); they are read through Starlark so this package
// depends only on their shape.

// hdrer is a run or a histogram: latency values in microseconds.
type hdrer interface {
	Hdr() *hdrhistogram.Histogram
}

// attrString returns v.name as a string ("" when absent).
func attrString(v starlark.Value, name string) string {
	switch x := starval.Attr(v, name).(type) {
	case nil:
		return ""
	case starlark.String:
		return string(x)
	default:
		return x.String()
	}
}

// field reads a column of a row: a dict key or an attribute.
func field(row starlark.Value, name string) (starlark.Value, bool) {
	if d, ok := row.(starlark.Mapping); ok {
		if x, found, err := d.Get(starlark.String(name)); err == nil && found {
			return x, true
		}
		return nil, false
	}
	x := starval.Attr(row, name)
	return x, x != nil
}

// rowsOf returns the rows of a table or a list of rows.
func rowsOf(v starlark.Value) ([]starlark.Value, error) {
	if r := starval.Attr(v, "rows"); r != nil {
		v = r
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("want a table or a list of rows, got %s", v.Type())
	}
	return slices.Collect(starlark.Elements(it)), nil
}
