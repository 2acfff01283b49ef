package mongo

import (
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/process"
	_ "github.com/benchbook/benchbook/builtins/workload"
)

func init() { backendtest.Install(Kind, process.Kind) }

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return backendtest.MustExec(t, src, nil)
}
