package runtime

import (
	"slices"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

type holder struct{ starlark.Value }

func (holder) StateID() string { return "pg-1" }

// A resource nested three levels down (arms = {"A": {"db": pg}}) is found:
// a cell that reads it runs on its state. Two levels was the old reach.
func TestHoldersSeeDeepResources(t *testing.T) {
	inner := starlark.NewDict(1)
	_ = inner.SetKey(starlark.String("db"), holder{starlark.None})
	arms := starlark.NewDict(1)
	_ = arms.SetKey(starlark.String("A"), starlark.NewList([]starlark.Value{inner}))
	v := starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{"arms": arms})
	if got := holders(v, 1000); !slices.Equal(got, []string{"pg-1"}) {
		t.Errorf("holders = %v, want the nested resource", got)
	}
	if got := holders(v, 3); got != nil {
		t.Errorf("holders past the depth limit = %v", got)
	}
}
