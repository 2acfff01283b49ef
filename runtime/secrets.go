package runtime

import (
	"maps"
	"os"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/redact"
)

// What the engine tells the redactor (runtime/redact), so that a value that
// flowed from a secret is masked wherever it is written:
//
//  1. before anything runs, from the source (secretFlow): the literals a
//     cell puts under a secret name ({"auth": ("u", "PW")},
//     h["Authorization"] = "Bearer T", (password, user) = ("PW", "bob"),
//     ["--requirepass", "PW"], ("Authorization", "T") pairs, a
//     password-named parameter's default), the secrets any literal holds as
//     text (a DSN, a SQL PASSWORD literal), and, across cells, the literals
//     assigned to a name whose value another cell puts in such a place
//     (tok = "T" in one cell, "Bearer " + tok in another);
//  2. while a cell runs, before each output (learnFrames): the values of
//     the secret-named variables in scope, a function's locals included;
//  3. when a cell ends (learnCell): every value it defined and every
//     output, by name, by field and by pattern, before any of them is
//     stored or shown;
//  4. builtins that take a secret say so themselves (a header, a process's
//     argv, a SQL statement).
//
// The listing of a record rendered later from the cache is masked from the
// source alone (1); its outputs were masked when they were stored.

// secretFlow is what a cell's source says of secrets.
type secretFlow struct {
	literals []string         // secrets as written: learned as they are
	texts    []string         // every string literal: a DSN's password, PASSWORD $$PW$$ in it
	sinks    []string         // names whose values the cell puts in a secret place
	assigns  map[string]parts // what the globals it assigns are made of
	calls    callSites        // the names each call's arguments read
}

// callSites are the names each call of a cell reads in its arguments, by
// the position of its '(' (where a running frame says it is).
type callSites map[callSite][]string

type callSite struct{ line, col int32 }

// parts are the strings, names and parameters an expression is built
// from.
type parts struct{ lits, idents, params []string }

func (p *parts) add(q parts) {
	p.lits = append(p.lits, q.lits...)
	p.idents = append(p.idents, q.idents...)
	p.params = append(p.params, q.params...)
}

// secretFlows analyses a cell's source.
func secretFlows(f *syntax.File) secretFlow {
	fl := secretFlow{assigns: map[string]parts{}, calls: callSites{}}
	secret := func(x syntax.Expr) {
		p := exprParts(x)
		fl.literals = append(fl.literals, p.lits...)
		fl.sinks = append(fl.sinks, p.idents...)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Literal:
			if s, ok := n.Value.(string); ok && n.Token == syntax.STRING {
				fl.texts = append(fl.texts, s)
			}
		case *syntax.DictEntry:
			if secretKey(n.Key) {
				secret(n.Value)
			}
		case *syntax.BinaryExpr: // a keyword argument
			if id, ok := n.X.(*syntax.Ident); ok && n.Op == syntax.EQ && redact.SecretName(id.Name) {
				secret(n.Y)
			}
		case *syntax.AssignStmt:
			fl.assign(n.LHS, n.RHS, secret)
		case *syntax.ForStmt:
			fl.derive(n.Vars, n.X)
		case *syntax.ForClause:
			fl.derive(n.Vars, n.X)
		case *syntax.CallExpr:
			if name := paramName(n); name != "" && redact.SecretName(name) {
				fl.literals = append(fl.literals, paramDefault(n)...)
			}
			if ids := identsIn(n.Args...); len(ids) > 0 {
				fl.calls[callSite{n.Lparen.Line, n.Lparen.Col}] = ids
			}
		case *syntax.TupleExpr:
			fl.sequence(n.List, secret)
		case *syntax.ListExpr:
			fl.sequence(n.List, secret)
		}
		return true
	})
	return fl
}

// assign notes what an assignment puts where: under a secret name (a
// variable, an index h["Authorization"], one of a tuple's names), and what
// each global is made of.
func (fl *secretFlow) assign(lhs, rhs syntax.Expr, secret func(syntax.Expr)) {
	lhs, rhs = unparen(lhs), unparen(rhs)
	switch l := lhs.(type) {
	case *syntax.Ident:
		if redact.SecretName(l.Name) {
			secret(rhs)
		}
		p := fl.assigns[l.Name]
		p.add(exprParts(rhs))
		fl.assigns[l.Name] = p
	case *syntax.IndexExpr:
		if secretKey(l.Y) {
			secret(rhs)
		}
	case *syntax.TupleExpr, *syntax.ListExpr:
		ls, rs := elements(l), elements(rhs)
		if rs == nil || len(ls) != len(rs) {
			fl.derive(lhs, rhs) // a, b = tok.split(":")
			return
		}
		for i := range ls {
			fl.assign(ls[i], rs[i], secret)
		}
	}
}

// derive notes that every name lhs binds is made of rhs (a loop's
// variables, an unpacked call's result).
func (fl *secretFlow) derive(lhs, rhs syntax.Expr) {
	p := exprParts(rhs)
	p.lits = nil // an element of a literal list is one literal, not all of them
	syntax.Walk(lhs, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok {
			q := fl.assigns[id.Name]
			q.add(p)
			fl.assigns[id.Name] = q
		}
		return true
	})
}

// sequence notes the secrets a tuple or list holds by position: the
// second of a pair whose first names a secret, the element after a
// password flag.
func (fl *secretFlow) sequence(xs []syntax.Expr, secret func(syntax.Expr)) {
	if len(xs) == 2 && secretKey(xs[0]) {
		secret(xs[1])
	}
	for i := 1; i < len(xs); i++ {
		if s, ok := stringLit(xs[i-1]); ok && !strings.Contains(s, "=") && strings.HasPrefix(s, "-") && redact.FlagSecret(strings.TrimLeft(s, "-")) {
			secret(xs[i])
		}
	}
}

// identsIn lists the names the expressions read.
func identsIn(xs ...syntax.Expr) []string {
	var out []string
	for _, x := range xs {
		syntax.Walk(x, func(n syntax.Node) bool {
			if id, ok := n.(*syntax.Ident); ok {
				out = append(out, id.Name)
			}
			return true
		})
	}
	return out
}

// secretCalls are the calls whose arguments read a secret-named or tainted
// name.
func secretCalls(calls callSites, tainted map[string]bool) map[callSite]bool {
	var out map[callSite]bool
	for site, names := range calls {
		if readsSecret(names, tainted) {
			if out == nil {
				out = map[callSite]bool{}
			}
			out[site] = true
		}
	}
	return out
}

// readsSecret reports whether one of names says secret or is tainted.
func readsSecret(names []string, tainted map[string]bool) bool {
	for _, n := range names {
		if tainted[n] || redact.SecretName(n) {
			return true
		}
	}
	return false
}

func secretKey(x syntax.Expr) bool {
	s, ok := stringLit(x)
	return ok && redact.SecretName(s)
}

func stringLit(x syntax.Expr) (string, bool) {
	lit, ok := x.(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return "", false
	}
	return lit.Value.(string), true
}

func unparen(x syntax.Expr) syntax.Expr {
	for {
		p, ok := x.(*syntax.ParenExpr)
		if !ok {
			return x
		}
		x = p.X
	}
}

func elements(x syntax.Expr) []syntax.Expr {
	switch x := unparen(x).(type) {
	case *syntax.TupleExpr:
		return x.List
	case *syntax.ListExpr:
		return x.List
	}
	return nil
}

// flowMethods are the string methods whose result holds their receiver's
// and arguments' text.
var flowMethods = map[string]bool{"format": true, "join": true, "strip": true, "lstrip": true, "rstrip": true,
	"lower": true, "upper": true, "title": true, "capitalize": true, "replace": true, "removeprefix": true,
	"removesuffix": true, "split": true, "rsplit": true, "splitlines": true, "partition": true,
	"rpartition": true, "elems": true, "codepoints": true}

// exprParts are the strings and names a value expression is built from:
// literals, the elements of a tuple, list or dict, both sides of a
// concatenation, a format's arguments, what a slice or an index is taken
// of, str() and repr() of a value, a parameter's default. Not the
// arguments of other calls (os.getenv("PGPASS") names no secret), nor a
// format string (the "Bearer %s" of "Bearer %s" % tok), nor a literal
// concatenated with a name ("Bearer " + tok: the prefix is no secret, tok
// is).
func exprParts(x syntax.Expr) parts {
	var p parts
	switch x := unparen(x).(type) {
	case *syntax.Literal:
		if s, ok := x.Value.(string); ok && x.Token == syntax.STRING {
			p.lits = append(p.lits, s)
		}
	case *syntax.Ident:
		p.idents = append(p.idents, x.Name)
	case *syntax.TupleExpr, *syntax.ListExpr:
		for _, e := range elements(x) {
			p.add(exprParts(e))
		}
	case *syntax.DictExpr:
		for _, e := range x.List {
			p.add(exprParts(e.(*syntax.DictEntry).Value))
		}
	case *syntax.BinaryExpr:
		switch x.Op {
		case syntax.PLUS:
			l, r := exprParts(x.X), exprParts(x.Y)
			if len(l.idents)+len(r.idents) > 0 {
				l.lits, r.lits = nil, nil // framing around a name: "Bearer " + tok
			}
			p.add(l)
			p.add(r)
		case syntax.PERCENT:
			p.add(exprParts(x.Y)) // the arguments, not the format
		}
	case *syntax.SliceExpr:
		p.add(exprParts(x.X))
	case *syntax.IndexExpr:
		p.add(exprParts(x.X))
	case *syntax.CallExpr:
		p.add(callParts(x))
	}
	return p
}

func callParts(call *syntax.CallExpr) parts {
	var p parts
	if name := paramName(call); name != "" {
		p.lits, p.params = paramDefault(call), []string{name}
		return p
	}
	switch fn := call.Fn.(type) {
	case *syntax.Ident:
		if fn.Name != "str" && fn.Name != "repr" {
			return p
		}
	case *syntax.DotExpr:
		if !flowMethods[fn.Name.Name] {
			return p
		}
		if fn.Name.Name != "format" {
			p.add(exprParts(fn.X)) // "".join(...) has no text of its own; a format string is no secret
		}
	default:
		return p
	}
	for _, a := range call.Args {
		if kw, ok := a.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
			a = kw.Y
		}
		p.add(exprParts(a))
	}
	return p
}

// paramDefault is what param(name, default) may return unset.
func paramDefault(call *syntax.CallExpr) []string {
	if d := defaultArg(call); d != nil {
		return exprParts(d).lits
	}
	return nil
}

// defaultArg is the default argument of a param(name, default) call, nil
// when it has none.
func defaultArg(call *syntax.CallExpr) syntax.Expr {
	for i, a := range call.Args {
		if kw, ok := a.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
			if id, ok := kw.X.(*syntax.Ident); ok && id.Name == "default" {
				return kw.Y
			}
			continue
		}
		if i == 1 {
			return a
		}
	}
	return nil
}

// learnSecrets tells the redactor the secrets the notebook and its
// parameters hold, so that they stay hidden wherever they turn up: the
// parameters' (by name and by pattern), each cell's source as text, and
// what learnFlows learns of the cells' flows. It returns the tainted
// names.
func learnSecrets(nb *Notebook, params map[string]string) map[string]bool {
	for name, v := range params {
		if !strings.HasPrefix(v, withheldParam) {
			redact.Learn(name, v)
		}
	}
	var flows []secretFlow
	for _, c := range nb.Cells {
		redact.Learn("", c.Body)
		flows = append(flows, c.flow)
	}
	tainted := learnFlows(flows)
	for _, fl := range flows { // api = param("api") put in a header: -p api=... is a secret
		for name, p := range fl.assigns {
			if tainted[name] || redact.SecretName(name) {
				for _, param := range p.params {
					if v, ok := params[param]; ok && !strings.HasPrefix(v, withheldParam) {
						redact.LearnValue(v)
					}
				}
			}
		}
	}
	return tainted
}

// learnFlows learns every string literal's secrets (as text), the
// literals the flows put in secret places, and the literals assigned to
// the names whose values any flow puts there, followed from name to name
// across all of them (one notebook's cells). It returns the names whose
// values flowed from a secret or into one (taintedNames), whose values the
// engine learns when it sees them.
func learnFlows(flows []secretFlow) map[string]bool {
	tainted := map[string]bool{}
	var todo []string
	taint := func(names []string) {
		for _, n := range names {
			if !tainted[n] {
				tainted[n] = true
				todo = append(todo, n)
			}
		}
	}
	for _, fl := range flows {
		for _, v := range fl.texts {
			redact.Learn("", v)
		}
		for _, v := range fl.literals {
			redact.LearnValue(v)
		}
		taint(fl.sinks)
	}
	for len(todo) > 0 { // backwards: what a secret is made of
		name := todo[0]
		todo = todo[1:]
		for _, fl := range flows {
			if p, ok := fl.assigns[name]; ok {
				for _, v := range p.lits {
					redact.LearnValue(v)
				}
				taint(p.idents)
			}
		}
	}
	return taintedNames(flows, tainted)
}

// taintedNames adds to tainted, forwards, every name assigned from a
// secret-named or tainted one (rev = tok[::-1], parts = dsn.split("@")),
// until nothing changes.
func taintedNames(flows []secretFlow, tainted map[string]bool) map[string]bool {
	for changed := true; changed; {
		changed = false
		for _, fl := range flows {
			for name, p := range fl.assigns {
				if tainted[name] {
					continue
				}
				for _, id := range p.idents {
					if tainted[id] || redact.SecretName(id) {
						tainted[name], changed = true, true
						break
					}
				}
			}
		}
	}
	return tainted
}

// LearnSource tells the redactor the secrets of a piece of code that has
// not reached a notebook yet (a kernel's execute_request, echoed on iopub
// before it runs; REPL input), as learnSecrets does for a notebook's, and
// returns its tainted names.
func LearnSource(code string) map[string]bool {
	redact.Learn("", code)
	f, err := fileOptions.Parse("input", code, 0)
	if err != nil {
		return nil
	}
	return learnFlows([]secretFlow{secretFlows(f)})
}

// setTainted gives the cells' threads the notebook's tainted names, with
// those the REPL's inputs added so far.
func (e *Engine) setTainted(nb map[string]bool) {
	e.tainted[0] = nb
	m := maps.Clone(nb)
	if m == nil {
		m = map[string]bool{}
	}
	for k := range e.tainted[1] {
		m[k] = true
	}
	e.sess.tainted.Store(&m)
}

// setREPLTainted adds the tainted names of one REPL input: the REPL's
// globals persist across inputs, so do they.
func (e *Engine) setREPLTainted(names map[string]bool) {
	if len(names) == 0 {
		return
	}
	if e.tainted[1] == nil {
		e.tainted[1] = map[string]bool{}
	}
	for k := range names {
		e.tainted[1][k] = true
	}
	e.setTainted(e.tainted[0])
}

// learnCell learns the secrets in what a cell made: the values it left
// (its globals, cell-local ones too) and its outputs, by name, by field
// and by pattern, and then the values of its tainted names, before any
// of them is stored or shown.
func learnCell(c *CellDef, globals starlark.StringDict, outputs []starlark.Value, tainted map[string]bool) {
	names := append(append([]string(nil), c.Defines...), c.private...)
	for _, name := range names {
		if v, ok := globals[name]; ok {
			redact.Scan(name, v)
		}
	}
	for _, out := range outputs {
		redact.Scan("", out)
	}
	for _, name := range names {
		if v, ok := globals[name]; ok && tainted[name] {
			redact.LearnDerived(v)
		}
	}
}

// learnFrames learns the values of the secret-named and tainted variables
// the running code sees, before an output leaves: a password in a
// function's local, or a global a loop reassigns, is gone by the time the
// cell ends. The globals are read only for a cell that has such a one.
// And out itself, when the call that makes it (print(...), show(...))
// reads a secret-named or tainted name in its arguments: what the call
// made of the secret (print(tok[::-1]), print(",".join(tok.elems())))
// may hold no run of it String could find, so it is learned whole
// (LearnDerived), unless it holds a secret String hides already.
func learnFrames(t *starlark.Thread, out starlark.Value) {
	c := cell(t)
	tainted := session(t).taintedNames()
	learn := func(name string, v starlark.Value) {
		switch {
		case redact.SecretName(name):
			redact.Scan(name, v)
		case tainted[name]:
			redact.LearnDerived(v)
		}
	}
	depth := t.CallStackDepth()
	var site *callSite // of the innermost Starlark frame: the call making out
	for i := 0; i < depth; i++ {
		fr := t.DebugFrame(i)
		for j := 0; j < fr.NumLocals(); j++ {
			if b, v := fr.Local(j); v != nil {
				learn(b.Name, v)
			}
		}
		fn, ok := fr.Callable().(*starlark.Function)
		if !ok {
			continue
		}
		if site == nil {
			pos := fr.Position()
			site = &callSite{pos.Line, pos.Col}
		}
		if i == depth-1 && c.secretGlobals {
			for name, v := range fn.Globals() {
				learn(name, v)
			}
		}
	}
	if out != nil && site != nil && c.secretCalls[*site] {
		redact.LearnDerived(out) // after the variables: what they hold is masked as such
	}
}

// hasSecretName reports whether one of the names says secret or is
// tainted.
func hasSecretName(tainted map[string]bool, lists ...[]string) bool {
	for _, names := range lists {
		for _, n := range names {
			if redact.SecretName(n) || tainted[n] {
				return true
			}
		}
	}
	return false
}

// taintedNames are the notebook's tainted names (learnSecrets), for the
// threads of its cells.
func (s *Session) taintedNames() map[string]bool {
	if p := s.tainted.Load(); p != nil {
		return *p
	}
	return nil
}

// rescrub stores again the entries of the cells executed in this session
// that may hold a secret learned after they were stored (tok = "T" in one
// cell, "Bearer " + tok in a later one, reached only at run time): their
// outputs masked anew and, should a value now hold a secret, no values.
func (e *Engine) rescrub() {
	e.rescrubMemos()
	gen := redact.Generation()
	for _, st := range e.runs {
		if st.entry == nil || !st.Executed || st.scrubbed >= gen {
			continue
		}
		st.scrubbed = gen
		if !holdsSecret(st) {
			continue
		}
		why := st.Why
		st.Why = ""
		e.store1(st)
		if st.Status != StatusLive {
			st.Why = why
		}
	}
}

// memoWrites are the memo checkpoints an engine wrote, and the
// redactor's generation at the time.
type memoWrites struct {
	mu   sync.Mutex
	list []memoWrite
}

type memoWrite struct {
	scope, key string
	gen        uint64
}

func (w *memoWrites) add(scope, key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, memoWrite{scope, key, redact.Generation()})
}

// rescrubMemos removes the checkpoints written before a secret they hold
// was learned: a checkpoint saves time, so it goes rather than being
// rewritten, and the next run computes it again.
func (e *Engine) rescrubMemos() {
	m, ok := e.sess.memo.(memoStore)
	if !ok || m.written == nil {
		return
	}
	gen := redact.Generation()
	m.written.mu.Lock()
	list := m.written.list
	m.written.list = nil
	m.written.mu.Unlock()
	for _, w := range list {
		if w.gen >= gen {
			continue
		}
		// Unreadable now (its key holds a secret learned since, its inputs
		// moved) it would be computed again anyway.
		if cp, ok := m.Get(w.scope, w.key); !ok || checkpointHoldsSecret(cp) {
			os.Remove(m.s.memoPath(w.scope, w.key))
		}
	}
}

func checkpointHoldsSecret(cp *Checkpoint) bool {
	if _, secret := redact.Value(cp.Value); secret {
		return true
	}
	for _, out := range cp.Outputs {
		if _, secret := redact.Value(out); secret {
			return true
		}
	}
	return false
}

// holdsSecret reports whether a stored cell's outputs, warnings or values
// hold a secret the redactor knows now.
func holdsSecret(st *CellRun) bool {
	for _, out := range st.outputs {
		if _, secret := redact.Value(out); secret {
			return true
		}
	}
	for _, w := range st.warnings {
		if redact.String(w) != w {
			return true
		}
	}
	for _, v := range st.values {
		if _, secret := redact.Value(v); secret {
			return true
		}
	}
	return false
}
