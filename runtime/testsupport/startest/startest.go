// Package startest runs benchbook's Starlark tests: the one harness every
// package uses. It works as go.starlark.net's starlark/eval_test.go does
// with internal/chunkedfile and starlarktest:
//
//   - RunFiles runs testdata/*.star files. A file is split into chunks at
//     "---" lines; each chunk is a program of its own, run in a fresh
//     session. An error a chunk should raise is written beside the line
//     that raises it, as a Go-quoted regexp after "###":
//
//     x = compare(exp, metric = 3)  ### "metric must be a name or a function"
//
//     Any other error fails the test with its Starlark backtrace, and an
//     expected error that did not happen fails it too.
//
//   - Exec and MustExec run a Go test's inline snippet the same way.
//
// Code runs in the notebook dialect (runtime.FileOptions) with the
// engine's Core builtins, the modules the test names (Options.Modules: a
// package's own, and those its code drives), starlarktest's assert module
// and the test's own Globals, on a thread of a runtime.Session that is
// closed when the test ends, so backends and processes a test starts stop
// with it.
package startest

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarktest"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime"
)

// Options shape the session a test's code runs in. The zero value is a
// cell named "t" in fresh temporary notebook and cache directories.
type Options struct {
	Ctx         context.Context     // nil: context.Background(); cancel it to play Ctrl-C
	Stderr      io.Writer           // progress lines; nil: discarded
	NotebookDir string              // relative paths resolve here; "": a temp dir
	CacheDir    string              // resources and checkpoints; "": a temp dir
	Cell        *runtime.Cell       // nil: a new cell named "t"
	Modules     []runtime.Module    // the builtin modules the code sees, beside Core
	Stdlib      fs.FS               // what "@std/NAME" loads; nil: none
	Globals     starlark.StringDict // fixtures and fakes, beside the builtins and assert
	// Load replaces the session's loader (which reads @std/ modules and
	// files beside the notebook); nil keeps it.
	Load func(*starlark.Thread, string) (starlark.StringDict, error)
	// Print replaces print, which otherwise goes to the cell's outputs.
	Print func(*starlark.Thread, string)
}

// Thread returns a thread of a new session set up by o; the session closes
// when the test ends. assert's failures are reported to t.
func Thread(t testing.TB, o Options) *starlark.Thread {
	t.Helper()
	if o.Ctx == nil {
		o.Ctx = context.Background()
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.NotebookDir == "" {
		o.NotebookDir = t.TempDir()
	}
	if o.CacheDir == "" {
		o.CacheDir = t.TempDir()
	}
	if o.Cell == nil {
		o.Cell = &runtime.Cell{Name: "t"}
	}
	s := &runtime.Session{Ctx: o.Ctx, Stderr: o.Stderr, NotebookDir: o.NotebookDir, CacheDir: o.CacheDir, Modules: moduleSet(t, o)}
	t.Cleanup(s.Close)
	th := s.NewThread(o.Cell)
	if o.Load != nil {
		th.Load = o.Load
	}
	if o.Print != nil {
		th.Print = o.Print
	}
	starlarktest.SetReporter(th, t)
	return th
}

// moduleSet merges o's modules; a clash fails the test.
func moduleSet(t testing.TB, o Options) *runtime.ModuleSet {
	t.Helper()
	m, err := runtime.NewModuleSet(o.Stdlib, o.Modules...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Env returns what test code sees: Core and o's modules, the members of
// starlarktest's assert module, and o.Globals (which win).
func Env(t testing.TB, o Options) starlark.StringDict {
	t.Helper()
	asserts, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	env := moduleSet(t, o).Globals()
	for _, d := range []starlark.StringDict{asserts, o.Globals} {
		for k, v := range d {
			env[k] = v
		}
	}
	return env
}

// Exec runs a snippet of Starlark in a new session and returns its globals
// and its error, for a test that inspects either.
func Exec(t testing.TB, o Options, src string) (starlark.StringDict, error) {
	t.Helper()
	th := Thread(t, o)
	name := strings.ReplaceAll(t.Name(), "/", "_") + ".star"
	return starlark.ExecFileOptions(runtime.FileOptions(), th, name, src, Env(t, o))
}

// MustExec is Exec for a snippet that must succeed: an error stops the test
// with its Starlark backtrace.
func MustExec(t testing.TB, o Options, src string) starlark.StringDict {
	t.Helper()
	g, err := Exec(t, o, src)
	if err != nil {
		t.Fatal(Describe(err))
	}
	return g
}

// Describe renders an error as a test failure should show it: with the
// Starlark backtrace when there is one.
func Describe(err error) string {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return ee.Backtrace()
	}
	return err.Error()
}

// RunFiles runs every file matching pattern (usually "testdata/*.star") as
// a subtest, chunk by chunk; options, when not nil, gives each chunk's
// session (fresh fixtures for every chunk).
func RunFiles(t *testing.T, pattern string, options func(t *testing.T) Options) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files match %s (%v)", pattern, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			for _, c := range readChunks(t, file) {
				var o Options
				if options != nil {
					o = options(t)
				}
				runChunk(t, o, c)
			}
		})
	}
}

// RunSource runs src as RunFiles runs a file named file: chunk by chunk,
// each error matched with its "###" expectation (the docs' examples).
func RunSource(t *testing.T, o Options, file, src string) {
	t.Helper()
	for _, c := range splitChunks(t, file, src) {
		runChunk(t, o, c)
	}
}

// runChunk executes one chunk and matches its errors with its expectations.
func runChunk(t *testing.T, o Options, c chunk) {
	t.Helper()
	th := Thread(t, o)
	_, err := starlark.ExecFileOptions(runtime.FileOptions(), th, c.file, c.src, Env(t, o))
	for _, line := range errorLines(err, c.file) {
		c.gotError(t, line.line, line.msg)
	}
	c.done(t)
}

type lineError struct {
	line int
	msg  string
}

// errorLines places err on lines of file: an evaluation error at the
// innermost frame in file, a syntax or resolve error at its position. An
// error that cannot be placed is line 0, which no expectation matches.
func errorLines(err error, file string) []lineError {
	var ee *starlark.EvalError
	var se syntax.Error
	var re resolve.ErrorList
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		for i := range ee.CallStack {
			if pos := ee.CallStack.At(i).Pos; pos.Filename() == file {
				return []lineError{{int(pos.Line), ee.Error()}}
			}
		}
		return []lineError{{0, ee.Backtrace()}}
	case errors.As(err, &se):
		return []lineError{{int(se.Pos.Line), se.Msg}}
	case errors.As(err, &re):
		var out []lineError
		for _, e := range re {
			out = append(out, lineError{int(e.Pos.Line), e.Msg})
		}
		return out
	}
	return []lineError{{0, err.Error()}}
}
