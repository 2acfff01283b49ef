// Package demo is the embedded demo target: a small search API over SQLite
// that benchbook runs as a child process so notebooks have something real to
// measure on a machine with only Go.
package demo

import (
	"context"
	"errors"

	"go.starlark.net/starlark"
)

// Builtin is backend.demo(**options).
var Builtin = starlark.NewBuiltin("backend.demo", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return nil, errors.New("backend.demo: not implemented yet")
})

// Serve runs the demo server in this process (the child side); the benchbook
// binary calls it for its hidden "__demo" subcommand.
func Serve(ctx context.Context, args []string) error {
	return errors.New("demo: not implemented yet")
}
