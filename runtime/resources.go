package runtime

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/runtime/resstate"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// The resources module lets an experiment start every run from one state:
//
//	resources.mark() -> mark      the state of every live resource now
//	resources.reset(mark)         put every resource the cell used since
//	                              back into its marked state (from a snapshot)
//
// abab, sweep and soak call them (restore = True); a notebook rarely needs to.
var resourcesModule = &starlarkstruct.Module{
	Name: "resources",
	Members: starlark.StringDict{
		"mark":  starlark.NewBuiltin("resources.mark", markBuiltin),
		"reset": starlark.NewBuiltin("resources.reset", resetBuiltin),
	},
}

// stateMark is the value of resources.mark().
type stateMark struct{ states map[string]string }

func (m *stateMark) String() string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(m.states)) {
		parts = append(parts, resstate.Label(id)+"@"+resstate.Short(m.states[id]))
	}
	return "<mark " + strings.Join(parts, ", ") + ">"
}
func (m *stateMark) Type() string          { return "mark" }
func (m *stateMark) Freeze()               {}
func (m *stateMark) Truth() starlark.Bool  { return true }
func (m *stateMark) Hash() (uint32, error) { return 0, errors.New("unhashable type: mark") }

// fingerprint names the marked states, for memo keys.
func (m *stateMark) fingerprint() string {
	ids := make([]string, 0, len(m.states))
	for id := range m.states {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s@%s;", id, m.states[id])
	}
	return b.String()
}

func markBuiltin(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	m, err := Mark(t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return &stateMark{states: m}, nil
}

func resetBuiltin(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &v); err != nil {
		return nil, err
	}
	m, ok := v.(*stateMark)
	if !ok {
		return nil, fmt.Errorf("%s: want a mark from resources.mark(), got %s", b.Name(), v.Type())
	}
	if err := Reset(t, m.states); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.None, nil
}
