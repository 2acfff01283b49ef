package workload

import (
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// CompareSameType: two runs are equal when they store alike: the same
// counts, windows, figures, warnings and histograms (JSON sorts the maps),
// so a run read back from the cache equals the one measured. The open
// loop's dispatch lag, which is not stored, is not compared. Runs stay
// unhashable, as histograms are.
func (r *Run) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualStored(op, r, y.(*Run))
}
