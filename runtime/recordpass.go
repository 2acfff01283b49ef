package runtime

import (
	"maps"
	"slices"
	"sync"

	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/redact"
)

// A record pass is a builtin's look at the whole record before it is
// rendered or gated: what no single cell can know, such as the
// multiplicity of a notebook's comparisons and which of them its
// verdict(...) rests on. A pass may replace values in the record (never
// the cells' own values, which the cache and later cells share).
//
// The runtime knows no builtin: a builtin registers its pass, and the
// types of the named values the record keeps (Record.Named), in init.

var (
	passesMu  sync.Mutex
	passes    []func(*record.Record)
	keptTypes = map[string]bool{}
)

// RegisterRecordPass adds a pass every record goes through, in the order
// registered.
func RegisterRecordPass(p func(*record.Record)) {
	passesMu.Lock()
	defer passesMu.Unlock()
	passes = append(passes, p)
}

// KeepNamed makes records keep every global of this value type a cell
// defined, shown or not (Record.Named): tools read them back from a JSON
// record (run -baseline gates every comparison), and passes see them.
func KeepNamed(typ string) {
	passesMu.Lock()
	defer passesMu.Unlock()
	keptTypes[typ] = true
}

func recordPasses() ([]func(*record.Record), map[string]bool) {
	passesMu.Lock()
	defer passesMu.Unlock()
	return slices.Clone(passes), maps.Clone(keptTypes)
}

// finishRecord adds the named values of the kept types and runs the passes.
func (e *Engine) finishRecord(r *record.Record) {
	ps, kept := recordPasses()
	if len(kept) > 0 {
		r.Named = e.namedValues(kept)
	}
	for _, p := range ps {
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
