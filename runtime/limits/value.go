package limits

import (
	"errors"
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// ErrTooDeep is wrapped by the error for a value nested past Depth.
var ErrTooDeep = errors.New("nested too deeply")

// CheckValue walks v without recursion and fails when it is nested deeper
// than Depth or its size (elements and string bytes, close to its encoding)
// passes Value. Displaying, encoding and hashing a value recurse through
// it, and Starlark's own printing takes time quadratic in the depth: a
// 6-million-deep list kept a run busy for minutes. A cycle is found as
// depth.
func CheckValue(v starlark.Value) error {
	maxDepth, maxSize := Depth.Get(), Value.Get()
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
			return fmt.Errorf("%w: more than %d levels (%s)", ErrTooDeep, maxDepth, Depth.Hint())
		}
		n, children := shape(it.v)
		size += n
		if size > maxSize {
			return fmt.Errorf("%w: more than %d bytes (%s)", ErrTooLarge, maxSize, Value.Hint())
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
