package sqlite

import (
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
)

func init() { backendtest.Install(Kind) }

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	return backendtest.MustExec(t, src, nil)
}
