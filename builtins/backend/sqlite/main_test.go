package sqlite

import (
	"os"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/hidden"
)

// modules are what the tests' snippets see: backend.sqlite and workload.
var modules = backendtest.Modules(Kind)

// TestMain runs the hidden modes the tests re-execute the test binary in
// (the supervisor of their children, the container reaper).
func TestMain(m *testing.M) {
	hidden.Run()
	os.Exit(m.Run())
}

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return backendtest.MustExec(t, modules, src, nil)
}
