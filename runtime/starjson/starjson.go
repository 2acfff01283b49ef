// Package starjson turns Starlark values into JSON, by one rule for every
// writer of JSON. The writers are a record's --format json, export.json and
// a run's figures.
//
// The rule: None is null; a bool a bool; an int a number, exact at any size
// (beyond int64 its digits as a json.Number, never a string: a big int is
// still a number, and int64 values past 2⁵³ were numbers already); a float
// a number, NaN and the infinities null (JSON has none); a string or bytes
// text; a dict (any mapping) an object in its own order, keys by their
// text; a list, tuple or set an array; a struct an object of its fields; a
// value with a JSON() method (record's JSONer: a run, a table) what that
// gives; another host value its data attributes, methods left out; a
// function an error. A value nested deeper than limits.Depth is an error
// (a cycle is one), as everywhere else a value is walked.
package starjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

// JSONer is a host value that gives its own JSON summary.
type JSONer interface{ JSON() any }

// Of converts v for encoding/json, host values included.
func Of(v starlark.Value) (any, error) {
	return (&walker{hosts: true, max: limits.Depth.Get()}).value(v, 0)
}

// Data converts v when it is data: what Of converts but a host value
// without a JSON() method, which is an error (Of gives its attributes, or
// its text). A record summarises such a
// value by its text alone, so nothing it did not print reaches the file.
func Data(v starlark.Value) (any, error) {
	return (&walker{max: limits.Depth.Get()}).value(v, 0)
}

type walker struct {
	hosts bool  // host values give their data attributes
	max   int64 // limits.Depth
}

func (w *walker) value(v starlark.Value, depth int64) (any, error) {
	if depth > w.max {
		return nil, fmt.Errorf("%w: more than %d levels, a cycle? (%s)", limits.ErrTooDeep, w.max, limits.Depth.Hint())
	}
	switch x := v.(type) {
	case nil, starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		return Int(x), nil
	case starlark.Float:
		return Float(float64(x)), nil
	case starlark.String:
		return string(x), nil
	case starlark.Bytes:
		return string(x), nil
	case starlark.IterableMapping:
		return w.mapping(x, depth)
	case JSONer:
		return x.JSON(), nil
	case *starlarkstruct.Struct:
		return w.attrs(x, depth)
	case starlark.Callable:
		return nil, fmt.Errorf("cannot encode a function (%s)", x.Name())
	case starlark.Iterable:
		return w.list(x, depth)
	case starlark.HasAttrs:
		if w.hosts {
			return w.attrs(x, depth)
		}
	}
	if w.hosts {
		return v.String(), nil
	}
	return nil, fmt.Errorf("cannot encode a %s", v.Type())
}

// Int is an int as JSON: an int64, or its exact digits.
func Int(x starlark.Int) any {
	if i, ok := x.Int64(); ok {
		return i
	}
	return json.Number(x.String())
}

// Float is a float as JSON: itself, or null for NaN and the infinities.
func Float(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

func (w *walker) mapping(m starlark.IterableMapping, depth int64) (any, error) {
	o := Object{}
	for _, kv := range m.Items() {
		val, err := w.value(kv[1], depth+1)
		if err != nil {
			return nil, err
		}
		o = append(o, Member{Key: text(kv[0]), Value: val})
	}
	return o, nil
}

func (w *walker) list(it starlark.Iterable, depth int64) (any, error) {
	out := []any{}
	for _, x := range slices.Collect(starlark.Elements(it)) {
		val, err := w.value(x, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, val)
	}
	return out, nil
}

// attrs writes a struct or host value's data attributes; methods are left
// out.
func (w *walker) attrs(h starlark.HasAttrs, depth int64) (any, error) {
	o := Object{}
	for _, name := range h.AttrNames() {
		x, err := h.Attr(name)
		if err != nil || x == nil {
			continue
		}
		if _, isFn := x.(starlark.Callable); isFn {
			continue
		}
		val, err := w.value(x, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		o = append(o, Member{Key: name, Value: val})
	}
	return o, nil
}

func text(v starlark.Value) string {
	if s, ok := starlark.AsString(v); ok {
		return s
	}
	return v.String()
}

// Object is a JSON object that keeps its keys in order.
type Object []Member

// Member is one key of an Object.
type Member struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order, without HTML escaping: the text
// is data, and a record escapes what it shows.
func (o Object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := Marshal(m.Key)
		v, err := Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Marshal is json.Marshal without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
