// Package gocode is the notebook's `gocode` module: Go source interpreted by
// yaegi. It serves request generators and response parsers where Starlark is
// too slow, without recompiling benchbook.
//
// Starlark API:
//
//	gocode.file(path, concurrent = False) -> gocode.module
//	    Interprets one Go file (any package name but main), relative to the
//	    notebook. Its sha256 is a "file" input of the cell, so editing the
//	    file makes the cell stale. Package initialization runs under the
//	    cell's context: Ctrl-C stops a stuck init. With concurrent = True,
//	    calls are not serialized; the file must then guard its own state.
//	module.NAME -> gocode.func or a constant
//	    Every exported function and constant, by its snake_case name
//	    (NextKey -> next_key) and by its Go name.
//	func(*args, **kwargs) -> value
//	    Keywords are the Go parameter names. A context.Context first
//	    parameter receives the cell's context (cancelled by Ctrl-C). Results:
//	    none -> None, one -> the value, several -> a tuple; a trailing
//	    non-nil error raises a Starlark error.
//
// The issue names the loader gocode.load, but load is a keyword of
// go.starlark.net's parser: gocode.load(...) does not parse. The member
// exists under both names (getattr(gocode, "load") reaches it); notebooks
// write gocode.file.
//
// Conversions, both ways: bool; ints (overflow is an error); floats;
// strings; []byte <-> bytes; slices and arrays <-> lists (tuples accepted);
// maps <-> dicts; structs <-> structs (starlarkstruct; a dict also works as
// an argument), whose fields are named by their json tag or their snake_case
// name; pointers are followed and nil is None; time.Time <-> an RFC 3339
// string, time.Duration <-> nanoseconds. A parameter of type any gets int,
// float64, string, bool, []byte, []any or map[string]any.
//
// From Go: a gocode.func value has Func() any, the Go function itself, so
// that workload.http(..., request = gen.next) calls it per request without
// Starlark. The workloads accept func() string, func(int64) string and
// func(int) string (http: a path and query, or a full URL; the int is the
// request's sequence number) and func() []any, func(int64) []any (sql
// arguments). Calls through Func() hold the module's mutex unless it was
// loaded with concurrent = True (yaegi itself is safe for concurrent calls;
// the mutex protects the file's own state). A panic in such a call reaches
// the Go caller as a panic whose value is an *Error naming file:line: the
// caller must recover it. Func.Input gives the file's cache input.
//
// Faults: benchbook never crashes on interpreted code. yaegi's language
// stops near Go 1.22: range over int or over a function, the min, max and
// clear builtins and the generic packages (slices, maps, cmp, iter) are
// reported before running, at their line, with what to write instead, and
// so are type errors yaegi would only hit in a call. go statements are
// refused: a panic in an interpreted goroutine cannot be recovered.
// Compile errors and panics become Starlark errors naming file:line (for a
// panic, the line of the statement of the function body it came through,
// as yaegi traces it). Ctrl-C interrupts a call stuck in a loop that never
// looks at its context. Loop variables are shared between iterations as
// before Go 1.22: copy one (i := i) before capturing it in a closure.
package gocode

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/limits"
)

// Module is the gocode module.
func Module() runtime.Module {
	return runtime.Module{Name: "gocode", Globals: starlark.StringDict{"gocode": members}, Docs: docs}
}

// docs is the module's reference (benchbook help gocode).
//
//go:embed reference.md
var docs string

// members are gocode.file and gocode.load, as notebooks see them.
var members = &starlarkstruct.Module{
	Name: "gocode",
	Members: starlark.StringDict{
		"file": starlark.NewBuiltin("gocode.file", load),
		"load": starlark.NewBuiltin("gocode.load", load),
	},
}

func load(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var opts loadOptions
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "concurrent?", &opts.concurrent); err != nil {
		return nil, err
	}
	full, err := filepath.Abs(runtime.Path(thread, path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	text, err := limits.ReadFile(full, limits.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	sum := sha256.Sum256(text)
	hash := hex.EncodeToString(sum[:])
	runtime.AddInput(thread, runtime.Input{Kind: "file", Name: full, Hash: hash})

	src, err := parseSource(path, text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	opts.stdout = runtime.Stderr(thread)
	m, err := compile(runtime.Context(thread), src, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	m.path, m.hash = full, hash
	return m, nil
}
