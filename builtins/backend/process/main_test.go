package process

import (
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
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

// testPort is a free loopback port.
func testPort(t *testing.T) int {
	t.Helper()
	return backendtest.FreePort(t)
}
