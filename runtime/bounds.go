package runtime

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/limits"
)

// boundOutputs replaces each output nested or sized past the limits
// (runtime/limits) with a line saying why, before anything displays,
// encodes or hashes it, and returns the first such error naming the cell.
func boundOutputs(cell string, outputs []starlark.Value) error {
	var first error
	for i, out := range outputs {
		if err := checkValue(out); err != nil {
			err = fmt.Errorf("cell %s: output %d (%s): %w", cell, i+1, out.Type(), err)
			outputs[i] = Printed("not shown: " + err.Error())
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// boundValues fails on the first value a cell defines that is nested or
// sized past the limits: such a value would be encoded, hashed and shown.
func boundValues(cell string, names []string, values starlark.StringDict) error {
	for _, name := range names {
		v, ok := values[name]
		if !ok {
			continue
		}
		if err := checkValue(v); err != nil {
			return fmt.Errorf("cell %s: value %s (%s): %w", cell, name, v.Type(), err)
		}
	}
	return nil
}

// checkValue walks v without recursion and fails when it is nested deeper
// than limits.Depth or its size (elements and string bytes, close to its encoding)
// passes limits.Value. Displaying, encoding and hashing a value recurse through
// it, and Starlark's own printing takes time quadratic in the depth: a
// 6-million-deep list kept a run busy for minutes. A cycle is found as
// depth.
func checkValue(v starlark.Value) error {
	maxDepth, maxSize := limits.Depth.Get(), limits.Value.Get()
	type item struct {
		v     starlark.Value
		depth int64
	}
	stack := []item{{v, 0}}
	var size int64
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > maxDepth {
			return fmt.Errorf("%w: more than %d levels (%s)", limits.ErrTooDeep, maxDepth, limits.Depth.Hint())
		}
		n, children := shape(it.v)
		size += n
		if size > maxSize {
			return fmt.Errorf("%w: more than %d bytes (%s)", limits.ErrTooLarge, maxSize, limits.Value.Hint())
		}
		for _, c := range children {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return nil
}

// shape is a value's own size and the values inside it.
func shape(v starlark.Value) (int64, []starlark.Value) {
	switch v := v.(type) {
	case starlark.String:
		return int64(len(v)) + 1, nil
	case starlark.Bytes:
		return int64(len(v)) + 1, nil
	case *starlark.List:
		return 2, elems(v)
	case starlark.Tuple:
		return 2, v
	case *starlark.Set:
		return 2, elems(v)
	case *starlark.Dict:
		var out []starlark.Value
		for _, kv := range v.Items() {
			out = append(out, kv[0], kv[1])
		}
		return 2, out
	case *starlarkstruct.Struct:
		var out []starlark.Value
		for _, name := range v.AttrNames() {
			a, err := v.Attr(name)
			if err == nil {
				out = append(out, a)
			}
		}
		return 2, out
	}
	return 9, nil
}

func elems(s interface {
	starlark.Iterable
	Len() int
}) []starlark.Value {
	out := make([]starlark.Value, 0, s.Len())
	it := s.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		out = append(out, x)
	}
	return out
}
