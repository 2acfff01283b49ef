package starval

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// EqualOnly answers a CompareSameType call of a value that compares by
// content but has no order: eq is whether x and y hold the same content.
// A value a builtin returns compares by what it holds, not by identity, so
// two answers of two arms that are the same are equal (issue 33: two equal
// query answers compared unequal).
func EqualOnly(op syntax.Token, eq bool, x, y starlark.Value) (bool, error) {
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("%s %s %s not implemented", x.Type(), op, y.Type())
}
