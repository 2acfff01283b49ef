package build_test

import (
	"os"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/build"
	"github.com/benchbook/benchbook/builtins/backend/process"
	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// modules are what the tests' snippets see: build, backend.process and
// workload.
var modules = backendtest.Modules(build.Kind, process.Kind)

// TestMain runs the hidden modes the tests re-execute the test binary in
// (the supervisor of their children, the container reaper).
func TestMain(m *testing.M) {
	hidden.Run()
	os.Exit(m.Run())
}

// cacheDirs holds each test's one cache dir: its runs share the binaries
// they built.
var cacheDirs = map[string]string{}

func run(t *testing.T, src string) (starlark.StringDict, error) {
	t.Helper()
	dir, ok := cacheDirs[t.Name()]
	if !ok {
		dir = t.TempDir()
		cacheDirs[t.Name()] = dir
	}
	return backendtest.ExecIn(t, modules, dir, src, nil)
}

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	g, err := run(t, src)
	if err != nil {
		t.Fatal(startest.Describe(err))
	}
	return g
}
