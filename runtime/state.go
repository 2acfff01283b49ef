package runtime

import (
	"strings"

	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/resstate"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// This file connects the resource tracker (package resstate) to Starlark
// threads, cells and the cache: see "Live resources" in doc.go.

// Resource is a live system whose data is part of the notebook's state. A
// builtin registers it with RegisterResource when a cell creates or reuses
// it and calls Touch before every use.
type Resource = resstate.Resource

func stateSession(t *starlark.Thread) (*resstate.Tracker, *Cell) {
	return session(t).tracker, cell(t)
}

// RegisterResource makes a resource known to the session. The running cell
// records that it created the resource in state r.Initial.
func RegisterResource(t *starlark.Thread, r *Resource) error {
	tr, c := stateSession(t)
	if tr == nil {
		return nil
	}
	AddInput(t, Input{Kind: resstate.KindStateNew, Name: r.ID, Hash: r.Initial})
	return tr.Register(c.states(), r)
}

// Touch is called by a builtin before it uses resource id (change false) or
// changes it (change true). On the cell's first touch the resource is put in
// the state the notebook order gives the cell (restored from a snapshot if
// it holds anything else); that state becomes an input of the cell.
func Touch(t *starlark.Thread, id string, change bool) error {
	tr, c := stateSession(t)
	if tr == nil {
		return nil
	}
	entered, first, err := tr.Touch(c.states(), id, change)
	if first {
		AddInput(t, Input{Kind: resstate.KindState, Name: id, Hash: entered})
	}
	return err
}

// Mark is resources.mark(): the state of every resource now, for Reset. A
// resource the cell changed gets a snapshot of its current data.
func Mark(t *starlark.Thread) (map[string]string, error) {
	tr, c := stateSession(t)
	if tr == nil {
		return nil, nil
	}
	return tr.Mark(c.states())
}

// Reset is resources.reset(mark): every resource the cell touched since the
// mark is put back in its marked state.
func Reset(t *starlark.Thread, m map[string]string) error {
	tr, c := stateSession(t)
	if tr == nil {
		return nil
	}
	return tr.Reset(c.states(), m)
}

// StateOf is the state a memoized run of the cell would start from, for
// its key (see resstate.Tracker.StateOf).
func StateOf(t *starlark.Thread, id string) string {
	tr, c := stateSession(t)
	if tr == nil {
		return ""
	}
	return tr.StateOf(c.states(), id)
}

func (c *Cell) states() *resstate.Cell {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st == nil {
		c.st = resstate.NewCell(c.Name, c.Key)
	}
	return c.st
}

// Restored lists the restores a cell's execution needed, for the record.
func (c *Cell) Restored() []string { return c.st.Restored() }

// RestoreSummary is the restores in a phrase for the cell's reason.
func (c *Cell) RestoreSummary() string { return c.st.RestoreSummary() }

// effects lists the resource states among a cell's inputs.
func effects(inputs []Input) []resstate.Effect {
	var out []resstate.Effect
	for _, in := range inputs {
		if strings.HasPrefix(in.Kind, resstate.KindState) {
			out = append(out, resstate.Effect{Kind: in.Kind, ID: in.Name, State: in.Hash})
		}
	}
	return out
}

// advance moves the walk past a cell: the resources it created or left in
// a new state now hold that state. A cell that will not run now (stale,
// never) leaves the states it might change unknown.
func (e *Engine) advance(st *CellRun) {
	switch st.Status {
	case StatusHit, StatusLive, StatusRan:
		e.sess.tracker.Advance(effects(st.inputs))
	case StatusStale, StatusNever:
		if e.mayTouch(st) {
			e.sess.tracker.Unknown(st.Def.Name)
		}
	}
}

// mayTouch reports whether a cell could use a live resource: only a value
// of a live cell (a handle, a function) leads to one.
func (e *Engine) mayTouch(st *CellRun) bool {
	for _, name := range st.Def.Reads {
		up := e.runs[e.g.definer[name]]
		if up == nil || up.live() {
			return true
		}
	}
	return len(effects(st.inputs)) > 0
}

// staleStates checks the resource states an entry recorded: the cell must
// have run on the state the walk gives it now, and the state it left must
// still be there to restore.
func (e *Engine) staleStates(inputs []Input) string {
	legacy := false
	for _, in := range inputs {
		legacy = legacy || in.Kind == "resource"
	}
	return e.sess.tracker.Stale(effects(inputs), legacy)
}

// enterStates gives an executing cell the states the walk expects.
func (e *Engine) enterStates(c *Cell, st *CellRun) {
	// cache=false: its effects may differ every time, what it leaves is new each run.
	c.states().Enter(st.expectIn, st.Def.Options["cache"] == "false")
}

// leaveStates records the states a finished cell left (snapshots taken).
func (e *Engine) leaveStates(c *Cell) error {
	outs, err := e.sess.tracker.Finish(c.states())
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range outs {
		c.inputs = append(c.inputs, Input{Kind: o.Kind, Name: o.ID, Hash: o.State})
	}
	return nil
}

// TouchValue touches every resource v holds (a handle, or handles in a
// dict, list or struct): a use whose writes, if any, the resource's own
// detector sees.
func TouchValue(t *starlark.Thread, v starlark.Value) error {
	for _, id := range holders(v, int(limits.Depth.Get())) {
		if err := Touch(t, id, false); err != nil {
			return err
		}
	}
	return nil
}

// holders lists the resources a value holds, however deep in containers
// (targets = {"A": pg_a, "B": pg_b}, arms = {"A": {"db": pg_a}}): a cell
// that reads a resource runs on its state. A value is nested no deeper
// than limits.Depth (checkValue refuses it), which bounds the walk: left
// counts the levels down.
func holders(v starlark.Value, left int) []string {
	if sh, ok := v.(StateHolder); ok {
		return []string{sh.StateID()}
	}
	if left <= 0 {
		return nil
	}
	var out []string
	switch v := v.(type) {
	case *starlark.Dict:
		for _, kv := range v.Items() {
			out = append(out, holders(kv[1], left-1)...)
		}
	case *starlark.List, starlark.Tuple:
		it := v.(starlark.Iterable).Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			out = append(out, holders(x, left-1)...)
		}
	case starlark.HasAttrs:
		if _, ok := v.(*starlarkstruct.Struct); ok {
			for _, name := range v.AttrNames() {
				if a, err := v.Attr(name); err == nil && a != nil {
					out = append(out, holders(a, left-1)...)
				}
			}
		}
	}
	return out
}

// touchReads touches the resources among the values a cell reads before it
// runs: whatever it does with them (a DSN handed to pgbench included), it
// runs on the state the notebook order gives it, and that state is its input.
func (e *Engine) touchReads(t *starlark.Thread, c *CellDef, globals starlark.StringDict) error {
	for _, name := range c.Reads {
		if err := TouchValue(t, globals[name]); err != nil {
			return err
		}
	}
	return nil
}
