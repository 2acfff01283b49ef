package runtime

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"time"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/redact"
)

// This file is the engine's interactive surface, used by the REPL and by
// watch: plan without executing, bring one cell up to date, evaluate input
// against the notebook's globals, swap in an edited notebook.

// SetContext sets the context of the next operations (one per REPL input,
// cancelled by Ctrl-C).
func (e *Engine) SetContext(ctx context.Context) {
	e.sess.Ctx = ctx
	e.Interrupted = false
}

// SetParams replaces the -p parameters; cells that read a changed parameter
// become stale.
func (e *Engine) SetParams(p map[string]string) {
	e.opts.Params = p
	e.sess.Params = p
	e.setTainted(learnSecrets(e.NB, p))
}

// Plan recomputes every cell's state without executing anything.
func (e *Engine) Plan() {
	e.runs = map[*CellDef]*CellRun{}
	e.sess.tracker.StartWalk()
	for _, c := range e.g.order {
		e.advance(e.plan(c))
	}
}

// CellRuns returns the code cells' runs in file order (after Plan or Run).
func (e *Engine) CellRuns() []*CellRun {
	var out []*CellRun
	for _, c := range e.NB.Cells {
		if st := e.runs[c]; st != nil {
			out = append(out, st)
		}
	}
	return out
}

// CellValues returns the globals a cell defined, decoded from the cache if
// need be, or nil when it has none at hand: a live cell is not executed for
// this, nor is a cell that failed or was never computed.
func (e *Engine) CellValues(st *CellRun) starlark.StringDict {
	if st.values != nil || st.Status == StatusLive || st.entry == nil || st.entry.Live {
		return st.values
	}
	vals, err := e.values(st.Def)
	if err != nil {
		return nil
	}
	return vals
}

// Outputs are what the cell displayed, in order.
func (st *CellRun) Outputs() []starlark.Value { return st.outputs }

// Warnings are the cell's non-fatal problems.
func (st *CellRun) Warnings() []string { return st.warnings }

// Duration is how long the cell took when it was computed.
func (st *CellRun) Duration() time.Duration { return st.duration }

// RunMode is what RunCell does with a cell that is cached.
type RunMode int

const (
	// RunIfStale executes the cell only if it is stale: a cached cell is a
	// hit (Jupyter's execution of a cell, a value the REPL needs).
	RunIfStale RunMode = iota
	// RunAgain executes it even if cached, reusing the memo checkpoints
	// that still hold (the REPL's :run NAME): an interrupted abab resumes.
	RunAgain
	// RunForced executes it even if cached and ignores its checkpoints
	// (the REPL's :rerun NAME, as -rerun NAME does).
	RunForced
)

// RunCell brings the named cell up to date, executing its stale upstream
// cells first, and the cell itself as mode says. Dependents are left stale.
func (e *Engine) RunCell(name string, mode RunMode) error {
	target := e.cellNamed(name)
	if target == nil {
		return fmt.Errorf("no code cell named %q", name)
	}
	if mode != RunIfStale {
		e.force, e.forceMode = target, mode
		defer func() { e.force = nil }()
	}
	need := e.g.upstream(target)
	e.runs = map[*CellDef]*CellRun{}
	e.sess.tracker.StartWalk()
	for _, c := range e.g.order {
		st := e.plan(c)
		if (c == target || need[c]) && st.Status == StatusStale {
			e.execute(st)
			e.progress(st)
		}
		e.advance(st)
	}
	e.rescrub()
	e.saveMemory()
	e.saveListings()
	if st := e.runs[target]; st.Err != nil {
		return st.Err
	}
	return nil
}

// Definer names the cell that defines the global name ("" if none).
func (e *Engine) Definer(name string) string {
	if c := e.g.definer[name]; c != nil {
		return c.Name
	}
	return ""
}

// Dependents lists, in file order, every cell downstream of the named
// cell, directly or not: what goes stale when it changes.
func (e *Engine) Dependents(cell string) []string {
	down := map[*CellDef]bool{}
	var visit func(*CellDef)
	visit = func(x *CellDef) {
		for _, d := range e.g.down[x] {
			if !down[d] {
				down[d] = true
				visit(d)
			}
		}
	}
	for _, c := range e.g.order {
		if c.Name == cell {
			visit(c)
		}
	}
	var out []string
	for _, c := range e.NB.Cells {
		if down[c] {
			out = append(out, c.Name)
		}
	}
	return out
}

// upstream returns every cell c depends on, directly or not.
func (g *graph) upstream(c *CellDef) map[*CellDef]bool {
	out := map[*CellDef]bool{}
	var visit func(*CellDef)
	visit = func(x *CellDef) {
		for _, u := range g.up[x] {
			if !out[u] {
				out[u] = true
				visit(u)
			}
		}
	}
	visit(c)
	return out
}

// Globals lists the notebook's global names, for completion.
func (e *Engine) Globals() []string {
	names := make([]string, 0, len(e.g.definer)+len(e.scratch))
	for name := range e.g.definer {
		names = append(names, name)
	}
	for name := range e.scratch {
		if _, dup := e.g.definer[name]; !dup {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Eval evaluates REPL input against the notebook's globals, computing the
// cells it reads on first use, plus the REPL's own globals, which persist
// across inputs. The last expression's value is the last output.
func (e *Engine) Eval(src string) ([]starlark.Value, error) {
	if e.scratch == nil {
		e.scratch = starlark.StringDict{}
	}
	if err := checkChains("<repl>", 1, src); err != nil {
		return nil, err
	}
	f, err := fileOptions.Parse("<repl>", src, 0)
	if err != nil {
		return nil, err
	}
	e.setREPLTainted(LearnSource(src))
	globals := make(starlark.StringDict, len(e.builtins)+len(e.scratch))
	for k, v := range e.builtins {
		globals[k] = v
	}
	fromNotebook := starlark.StringDict{}
	for _, name := range freeNames(f) {
		if _, ok := e.scratch[name]; ok {
			continue
		}
		if def := e.g.definer[name]; def != nil {
			v, err := e.value(def, name)
			if err != nil {
				return nil, err
			}
			globals[name] = v
			fromNotebook[name] = v
		}
	}
	for k, v := range e.scratch {
		globals[k] = v
	}
	f, _ = fileOptions.Parse("<repl>", src, 0) // resolving mutated the first tree
	cell := &Cell{Name: "repl", secretCalls: secretCalls(secretFlows(f).calls, e.sess.taintedNames())}
	thread := e.sess.NewThread(cell)
	stop := make(chan struct{})
	defer close(stop)
	go cancelWithGrace(e.sess.Ctx, thread, stop)
	err = e.runFile(thread, f, globals)
	if err == nil {
		// A change typed at the prompt leaves its resource in a state no
		// cell recorded: the next cell that uses it restores its own.
		err = e.leaveStates(cell)
	}
	// Keep what the input assigned; notebook values it only read are looked
	// up afresh next time (a reload or :run may have changed them).
	for k, v := range globals {
		if same(v, e.builtins[k]) || same(v, fromNotebook[k]) {
			continue
		}
		e.scratch[k] = v
		redact.Scan(k, v)
	}
	_, outputs, _ := cell.snapshot()
	for _, out := range outputs {
		redact.Scan("", out)
	}
	if berr := boundOutputs("repl", outputs); err == nil {
		err = berr // the REPL prints what it gets: bound it as a cell's
	}
	return outputs, err
}

// value returns one global of a cell, computing the cell if needed.
func (e *Engine) value(def *CellDef, name string) (starlark.Value, error) {
	st := e.runs[def]
	if st == nil || st.Status == StatusStale || st.Status == StatusNever {
		if err := e.RunCell(def.Name, RunIfStale); err != nil {
			return nil, err
		}
	}
	vals, err := e.values(def)
	if err != nil {
		return nil, err
	}
	v, ok := vals[name]
	if !ok {
		return nil, fmt.Errorf("cell %s did not define %s", def.Name, name)
	}
	return v, nil
}

// freeNames lists the names a chunk reads without defining them.
func freeNames(f *syntax.File) []string {
	free := map[string]bool{}
	if err := resolve.File(f, func(string) bool { return true }, starlark.Universe.Has); err != nil {
		return nil
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok {
			if b, ok := id.Binding.(*resolve.Binding); ok && b.Scope == resolve.Predeclared {
				free[id.Name] = true
			}
		}
		return true
	})
	return sortedKeys(free)
}

// Edit is what a Reload changed, by cell name.
type Edit struct {
	Edited  []string // cells whose text the user changed, in file order
	Added   []string // cells new in the file, in file order
	Removed []string // cells gone from the file, sorted
	// Changed is every new or changed cell in file order: the edited and
	// added ones, and those whose key changed only through an upstream cell.
	Changed []string
}

// Reload swaps in an edited notebook, keeping live resources and values
// computed in this process, and says what changed.
func (e *Engine) Reload(nb *Notebook) (Edit, error) {
	g, err := buildGraph(nb, e.builtins)
	if err != nil {
		return Edit{}, err
	}
	oldKey := map[string]string{}
	for c, st := range e.runs {
		oldKey[c.Name] = st.Key
	}
	oldCells := map[string]*CellDef{}
	for _, c := range e.NB.Cells {
		oldCells[c.Name] = c
	}
	e.NB, e.g, e.sources = nb, g, nil
	e.sess.defaults = paramDefaults(nb)
	e.setTainted(learnSecrets(nb, nil)) // an edit may hold a new one
	e.Plan()
	var ed Edit
	for _, c := range nb.Cells {
		old, ok := oldCells[c.Name]
		delete(oldCells, c.Name)
		st := e.runs[c]
		switch {
		case !ok:
			ed.Added = append(ed.Added, c.Name)
		case old.Body != c.Body:
			ed.Edited = append(ed.Edited, c.Name)
		}
		if !ok || old.srcHash+old.Body != c.srcHash+c.Body || !c.Markdown && (st == nil || oldKey[c.Name] != st.Key) {
			ed.Changed = append(ed.Changed, c.Name)
		}
	}
	ed.Removed = slices.Sorted(maps.Keys(oldCells))
	return ed, nil
}

// same reports whether a and b are the same value object (a pointer or a
// comparable scalar); never panics on incomparable values.
func same(a, b starlark.Value) bool {
	if a == nil || b == nil {
		return false
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Type() != rb.Type() {
		return false
	}
	if ra.Kind() == reflect.Pointer {
		return ra.Pointer() == rb.Pointer()
	}
	return ra.Comparable() && a == b
}
