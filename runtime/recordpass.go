package runtime

import (
	"maps"
	"slices"

	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/redact"
)

// A record pass is a builtin's look at the whole record before it is
// rendered or gated: what no single cell can know, such as the
// multiplicity of a notebook's comparisons and which of them its
// verdict(...) rests on. A pass may replace values in the record (never
// the cells' own values, which the cache and later cells share).
//
// The runtime knows no builtin: a module gives its pass (Module.Pass), and
// the types of the named values the record keeps (Module.Named).

// finishRecord adds the named values of the kept types and runs the passes.
func (e *Engine) finishRecord(r *record.Record) {
	if len(e.mods.named) > 0 {
		r.Named = e.namedValues(e.mods.named)
	}
	for _, p := range e.mods.passes {
		p(r)
	}
}

// namedValues lists the globals of the kept types, in cell order and by
// name within a cell, redacted as outputs are.
func (e *Engine) namedValues(kept map[string]bool) []record.Named {
	var out []record.Named
	for _, st := range e.CellRuns() {
		vals := e.CellValues(st)
		for _, name := range slices.Sorted(maps.Keys(vals)) {
			if v := vals[name]; kept[v.Type()] {
				shown, _ := redact.Value(v)
				out = append(out, record.Named{Cell: st.Def.Name, Name: name, Value: shown})
			}
		}
	}
	return out
}
