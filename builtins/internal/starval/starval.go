// Package starval reads the Starlark values builtins exchange, one concept
// in one place. Every builtin thus accepts and refuses the same things:
// Duration and PositiveDuration (starlark.Unpackers for "30s" or seconds,
// used by workload, host and backend), the one resolver of "a metric of a
// run" used by compare and plot.* (so "p99" means the same everywhere), and
// the attribute and list helpers.
package starval

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/metricname"
)

// Items returns the elements of a list or tuple, or v alone.
func Items(v starlark.Value) []starlark.Value {
	switch v := v.(type) {
	case *starlark.List, starlark.Tuple:
		var out []starlark.Value
		for x := range starlark.Elements(v.(starlark.Iterable)) {
			out = append(out, x)
		}
		return out
	}
	return []starlark.Value{v}
}

// Number converts an int or float to float64.
func Number(v starlark.Value) (float64, bool) {
	switch v := v.(type) {
	case starlark.Int:
		f, _ := starlark.AsFloat(v)
		return f, true
	case starlark.Float:
		return float64(v), true
	}
	return 0, false
}

// Attr returns v.name, or nil when v has no such attribute.
func Attr(v starlark.Value, name string) starlark.Value {
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

// Better is the direction of improvement of a metric given by name, from
// the one table in metricname.Direction; a function says nothing, so ok is
// false and the caller asks for better = ... rather than guess.
func Better(metric starlark.Value) (string, bool) {
	name, ok := starlark.AsString(metric)
	if !ok {
		return "", false
	}
	return metricname.Direction(name)
}

// Metric computes a metric of a run (or of a window, a row): metric is a
// function called with the run, or a name: a key of a dict, an attribute
// (called when it is a method with no arguments), or "pNN" through the
// run's p(q) method ("p99", "p999" = 99.9). A dict result (errors by class)
// counts as its total. A plain number is its own metric.
func Metric(th *starlark.Thread, run, metric starlark.Value) (float64, error) {
	var x starlark.Value
	var err error
	switch m := metric.(type) {
	case starlark.String:
		if f, ok := Number(run); ok {
			return f, nil
		}
		x, err = named(th, run, string(m))
	case starlark.Callable:
		x, err = starlark.Call(th, m, starlark.Tuple{run}, nil)
	default:
		return 0, fmt.Errorf("metric must be a name or a function, got %s", metric.Type())
	}
	if err != nil {
		return 0, err
	}
	if d, ok := x.(starlark.IterableMapping); ok {
		return total(d), nil
	}
	f, ok := Number(x)
	if !ok {
		return 0, fmt.Errorf("metric %s gave %s, want a number", metric, x.Type())
	}
	return f, nil
}

// total sums the numbers of a dict: errors by class count as all errors.
func total(d starlark.IterableMapping) float64 {
	sum := 0.0
	for _, kv := range d.Items() {
		if f, ok := Number(kv[1]); ok {
			sum += f
		}
	}
	return sum
}

func named(th *starlark.Thread, v starlark.Value, name string) (starlark.Value, error) {
	if base, tags, ok := metricname.Tagged(name); ok {
		for _, tag := range tags {
			var err error
			if v, err = tagged(v, tag); err != nil {
				return nil, err
			}
		}
		return named(th, v, base)
	}
	if d, ok := v.(starlark.Mapping); ok {
		x, found, err := d.Get(starlark.String(name))
		if err == nil && found {
			return x, nil
		}
	}
	if x := Attr(v, name); x != nil {
		if fn, ok := x.(starlark.Callable); ok {
			return starlark.Call(th, fn, nil, nil)
		}
		return x, nil
	}
	if q, ok := metricname.Percentile(name); ok {
		if p, ok := Attr(v, "p").(starlark.Callable); ok {
			return starlark.Call(th, p, starlark.Tuple{starlark.Float(q)}, nil)
		}
	}
	return nil, missing(v, name)
}

// tagged is v.by_tag[tag]: the run of one tag of a mix, or of one
// scenario of workload.concurrent's merged run.
func tagged(v starlark.Value, tag string) (starlark.Value, error) {
	byTag, ok := Attr(v, "by_tag").(starlark.IterableMapping)
	if !ok {
		return nil, fmt.Errorf("%s has no tags (metric[%s] reads run.by_tag[%q])", v.Type(), tag, tag)
	}
	x, found, err := byTag.Get(starlark.String(tag))
	if err != nil {
		return nil, err
	}
	if !found {
		var have []string
		for _, kv := range byTag.Items() {
			have = append(have, kv[0].String())
		}
		if len(have) == 0 {
			return nil, fmt.Errorf("%s has no tag %q: it has no tags (a mix's requests = [...] or a generator that names tags gives them)", v.Type(), tag)
		}
		return nil, fmt.Errorf("%s has no tag %q (its tags: %s)", v.Type(), tag, strings.Join(have, ", "))
	}
	return x, nil
}

// FloatList is xs as a Starlark list of floats.
func FloatList(xs []float64) *starlark.List {
	return list(xs, func(x float64) starlark.Value { return starlark.Float(x) })
}

// StringList is ss as a Starlark list of strings.
func StringList(ss []string) *starlark.List {
	return list(ss, func(s string) starlark.Value { return starlark.String(s) })
}

// IntList is ns as a Starlark list of ints.
func IntList(ns []int64) *starlark.List {
	return list(ns, func(n int64) starlark.Value { return starlark.MakeInt64(n) })
}

func list[T any](xs []T, conv func(T) starlark.Value) *starlark.List {
	l := make([]starlark.Value, len(xs))
	for i, x := range xs {
		l[i] = conv(x)
	}
	return starlark.NewList(l)
}
