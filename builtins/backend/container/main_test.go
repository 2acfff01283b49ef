package container

import (
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	_ "github.com/benchbook/benchbook/builtins/host"
	_ "github.com/benchbook/benchbook/builtins/metric"
	_ "github.com/benchbook/benchbook/builtins/workload"
)

func init() { backendtest.Install(Kind) }

// run executes Starlark src in a new session, in a cell named after the
// test.
func run(t *testing.T, src string) (starlark.StringDict, error) {
	t.Helper()
	return backendtest.Exec(t, src, nil)
}

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return backendtest.MustExec(t, src, nil)
}
