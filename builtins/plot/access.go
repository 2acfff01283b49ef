package plot

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
)

// The values plotted come from other packages (runs, histograms,
// comparisons, tables); they are read through Starlark so this package
// depends only on their shape.

// hdrer is a run or a histogram: latency values in microseconds.
type hdrer interface {
	Hdr() *hdrhistogram.Histogram
}

// items returns the elements of a list or tuple, or v alone.
func items(v starlark.Value) []starlark.Value {
	switch v := v.(type) {
	case *starlark.List, starlark.Tuple:
		var out []starlark.Value
		it := v.(starlark.Iterable).Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			out = append(out, x)
		}
		return out
	}
	return []starlark.Value{v}
}

// number converts an int or float to float64.
func number(v starlark.Value) (float64, bool) {
	switch v := v.(type) {
	case starlark.Int:
		f, _ := starlark.AsFloat(v)
		return f, true
	case starlark.Float:
		return float64(v), true
	}
	return 0, false
}

// attr returns v.name, or nil when v has no such attribute.
func attr(v starlark.Value, name string) starlark.Value {
	ha, ok := v.(starlark.HasAttrs)
	if !ok {
		return nil
	}
	x, err := ha.Attr(name)
	if err != nil {
		return nil
	}
	return x
}

// attrString returns v.name as a string ("" when absent).
func attrString(v starlark.Value, name string) string {
	switch x := attr(v, name).(type) {
	case nil:
		return ""
	case starlark.String:
		return string(x)
	default:
		return x.String()
	}
}

var percentileName = regexp.MustCompile(`^p(\d+(?:\.\d+)?)$`)

// metricOf computes a named or callable metric of a run:
// an attribute holding a number, "pNN" through the run's p(q) method, or
// the result of calling fn(run).
func metricOf(th *starlark.Thread, run, metric starlark.Value) (float64, error) {
	var x starlark.Value
	var err error
	switch m := metric.(type) {
	case starlark.Callable:
		x, err = starlark.Call(th, m, starlark.Tuple{run}, nil)
	case starlark.String:
		x, err = namedMetric(th, run, string(m))
	default:
		return 0, fmt.Errorf("metric must be a name or a function, got %s", metric.Type())
	}
	if err != nil {
		return 0, err
	}
	if d, ok := x.(starlark.IterableMapping); ok {
		return total(d), nil
	}
	f, ok := number(x)
	if !ok {
		return 0, fmt.Errorf("metric %s gave %s, want a number", metric, x.Type())
	}
	return f, nil
}

// total sums the numbers of a dict: errors by class count as all errors.
func total(d starlark.IterableMapping) float64 {
	sum := 0.0
	for _, kv := range d.Items() {
		if f, ok := number(kv[1]); ok {
			sum += f
		}
	}
	return sum
}

func namedMetric(th *starlark.Thread, v starlark.Value, name string) (starlark.Value, error) {
	if d, ok := v.(starlark.Mapping); ok {
		x, found, err := d.Get(starlark.String(name))
		if err == nil && found {
			return x, nil
		}
	}
	if x := attr(v, name); x != nil {
		if fn, ok := x.(starlark.Callable); ok {
			return starlark.Call(th, fn, nil, nil)
		}
		return x, nil
	}
	if m := percentileName.FindStringSubmatch(name); m != nil {
		if p, ok := attr(v, "p").(starlark.Callable); ok {
			q, _ := strconv.ParseFloat(m[1], 64)
			return starlark.Call(th, p, starlark.Tuple{starlark.Float(percentOf(m[1], q))}, nil)
		}
	}
	return nil, fmt.Errorf("%s has no metric %q", v.Type(), name)
}

// percentOf reads the digits of "p999" as 99.9 and of "p99" as 99:
// the usual shorthand where digits after the first two are decimals.
func percentOf(digits string, q float64) float64 {
	if len(digits) > 2 && digits != "100" && !strings.Contains(digits, ".") {
		q /= math.Pow(10, float64(len(digits)-2))
	}
	return q
}

// field reads a column of a row: a dict key or an attribute.
func field(row starlark.Value, name string) (starlark.Value, bool) {
	if d, ok := row.(starlark.Mapping); ok {
		if x, found, err := d.Get(starlark.String(name)); err == nil && found {
			return x, true
		}
		return nil, false
	}
	x := attr(row, name)
	return x, x != nil
}

// rowsOf returns the rows of a table or a list of rows.
func rowsOf(v starlark.Value) ([]starlark.Value, error) {
	if r := attr(v, "rows"); r != nil {
		v = r
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("want a table or a list of rows, got %s", v.Type())
	}
	return slices.Collect(starlark.Elements(it)), nil
}
