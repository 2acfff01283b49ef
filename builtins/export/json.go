package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/record"
)

func jsonBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var value starlark.Value
	indent := 2
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &value, "indent?", &indent, "name?", &name); err != nil {
		return nil, err
	}
	if indent < 0 || indent > 8 {
		return nil, fmt.Errorf("%s: indent must be in 0..8, got %d", b.Name(), indent)
	}
	text, err := JSON(value, indent)
	if err != nil {
		return nil, fmt.Errorf("%s: value: %w", b.Name(), err)
	}
	return &File{Name: fileName(name, labelOf(value, "data"), ".json"), MIME: "application/json", Text: text}, nil
}

// JSON encodes a Starlark value: dicts and structs keep their order,
// host values that summarize themselves (record.JSONer) give that
// summary, other host values their non-callable attributes.
func JSON(v starlark.Value, indent int) (string, error) {
	x, err := toJSON(v, 0)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent > 0 {
		enc.SetIndent("", fmt.Sprintf("%*s", indent, ""))
	}
	if err := enc.Encode(x); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// maxDepth stops a cyclic value.
const maxDepth = 64

// object is a JSON object that keeps its keys in order.
type object []member

type member struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := marshal(m.key)
		v, err := marshal(m.value)
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

// marshal is json.Marshal without HTML escaping: the text is data, and the
// record escapes what it shows.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func toJSON(v starlark.Value, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested too deeply (a cycle?)")
	}
	switch x := v.(type) {
	case nil, starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i, nil
		}
		return json.Number(x.BigInt().String()), nil
	case starlark.Float:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, nil
		}
		return float64(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Bytes:
		return string(x), nil
	case starlark.IterableMapping:
		return mappingJSON(x, depth)
	case record.JSONer:
		return x.JSON(), nil
	case starlark.Iterable:
		return listJSON(x, depth)
	case starlark.HasAttrs:
		return attrsJSON(x, depth)
	case starlark.Callable:
		return nil, fmt.Errorf("cannot encode a function (%s)", x.Name())
	}
	return v.String(), nil
}

func mappingJSON(m starlark.IterableMapping, depth int) (any, error) {
	var o object
	for _, kv := range m.Items() {
		val, err := toJSON(kv[1], depth+1)
		if err != nil {
			return nil, err
		}
		o = append(o, member{key: textOf(kv[0]), value: val})
	}
	if o == nil {
		return object{}, nil
	}
	return o, nil
}

func listJSON(it starlark.Iterable, depth int) (any, error) {
	out := []any{}
	for _, x := range itemsOf(it) {
		val, err := toJSON(x, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, val)
	}
	return out, nil
}

// attrsJSON writes a struct or host value's data attributes; methods are
// left out.
func attrsJSON(h starlark.HasAttrs, depth int) (any, error) {
	o := object{}
	for _, name := range h.AttrNames() {
		x, err := h.Attr(name)
		if err != nil || x == nil {
			continue
		}
		if _, isFn := x.(starlark.Callable); isFn {
			continue
		}
		val, err := toJSON(x, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		o = append(o, member{key: name, value: val})
	}
	return o, nil
}
