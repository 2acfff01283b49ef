package container

import (
	"os"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/metric"
)

// modules are what the tests' snippets see: backend.container, workload,
// host and metric.
var modules = append(backendtest.Modules(Kind), host.Module(), metric.Module())

// TestMain runs the hidden modes the tests re-execute the test binary in
// (the supervisor of their children, the container reaper).
func TestMain(m *testing.M) {
	hidden.Run()
	os.Exit(m.Run())
}

// run executes Starlark src in a new session, in a cell named after the
// test.
func run(t *testing.T, src string) (starlark.StringDict, error) {
	t.Helper()
	return backendtest.Exec(t, modules, src, nil)
}

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return backendtest.MustExec(t, modules, src, nil)
}
