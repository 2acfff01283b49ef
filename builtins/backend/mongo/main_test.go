package mongo

import (
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/process"
)

// modules are what the tests' snippets see: backend.mongo,
// backend.process and workload.
var modules = backendtest.Modules(Kind, process.Kind)

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return backendtest.MustExec(t, modules, src, nil)
}
