package starval

import (
	"bytes"
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

// Stored is a value the cache can store: its bytes (codec.Marshaler's
// method) hold its whole content.
type Stored interface {
	starlark.Value
	MarshalValue() ([]byte, error)
}

// EqualStored answers a CompareSameType call of a value whose stored bytes
// depend on its content alone (no map order, no addresses): x and y are
// equal when they store alike, so a value read back from the cache equals
// the one that was stored, and two arms' identical results are equal.
// Such a value stays unhashable or hashes part of what it stores.
func EqualStored(op syntax.Token, x, y Stored) (bool, error) {
	if op != syntax.EQL && op != syntax.NEQ {
		return EqualOnly(op, false, x, y)
	}
	if x == y {
		return EqualOnly(op, true, x, y)
	}
	a, err := x.MarshalValue()
	if err != nil {
		return false, fmt.Errorf("%s %s %s: %w", x.Type(), op, y.Type(), err)
	}
	b, err := y.MarshalValue()
	if err != nil {
		return false, fmt.Errorf("%s %s %s: %w", x.Type(), op, y.Type(), err)
	}
	return EqualOnly(op, bytes.Equal(a, b), x, y)
}
