package runtime

import (
	"sort"

	"go.starlark.net/starlark"
)

// Peek returns a global's value when it is at hand — assigned at the REPL,
// or defined by a cell already computed or cached — without running
// anything: tab completion of attributes must never start a workload.
func (e *Engine) Peek(name string) (starlark.Value, bool) {
	if v, ok := e.scratch[name]; ok {
		return v, true
	}
	def := e.g.definer[name]
	if def == nil {
		return nil, false
	}
	st := e.runs[def]
	if st == nil || (st.values == nil && (st.entry == nil || st.Status == StatusLive)) {
		return nil, false
	}
	vals, err := e.values(def)
	if err != nil {
		return nil, false
	}
	v, ok := vals[name]
	return v, ok
}

// Shadow is a REPL name that hides a notebook global of the same name.
type Shadow struct {
	Name string
	Cell string // the cell that defines it in the notebook
}

// Shadowed lists the names assigned at the REPL that the notebook also
// defines: the REPL sees its own value from then on, the notebook (and
// :run, :render) keeps the cell's.
func (e *Engine) Shadowed() []Shadow {
	var out []Shadow
	for name := range e.scratch {
		if def := e.g.definer[name]; def != nil {
			out = append(out, Shadow{Name: name, Cell: def.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
