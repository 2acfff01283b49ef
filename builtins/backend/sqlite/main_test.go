package sqlite

import (
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
)

// modules are what the tests' snippets see: backend.sqlite and workload.
var modules = backendtest.Modules(Kind)

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return backendtest.MustExec(t, modules, src, nil)
}
