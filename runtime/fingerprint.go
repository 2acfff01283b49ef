package runtime

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/limits"
)

// A memo(key, fn) checkpoint is keyed by what fn computes, not by the cell's
// key: the text of fn and of every function it reaches, the values of their
// free variables and of the globals they name (a global of another cell by
// that cell's value hash, a resource by its identity and the state the run
// will start from). A cell whose key changed only through something fn
// never sees (abab's pairs, a sweep grid that grew) finds its earlier runs.
// Where a value cannot be identified the checkpoint falls back to the
// cell's key, as before.

// StateHolder is a live resource handle: a memoized computation that names
// it depends on the resource's state.
type StateHolder interface {
	StateID() string // the Resource.ID it was registered with
}

type fprint struct {
	e        *Engine
	t        *starlark.Thread
	seen     map[*starlark.Function]bool
	maxDepth int // limits.Depth: deeper, fn is not identified
}

// fingerprint returns the identity of fn's computation, or false. It is an
// HMAC under the cache's salt (salt.go), as parameters are: it names a
// checkpoint on disk and covers every string fn closes over, a DSN's
// password among them, which a plain hash would let anyone who reads the
// cache dir try guesses against.
func (e *Engine) fingerprint(t *starlark.Thread, fn starlark.Value) (string, bool) {
	f := &fprint{e: e, t: t, seen: map[*starlark.Function]bool{}, maxDepth: int(limits.Depth.Get())}
	h := hmac.New(sha256.New, e.sess.paramSalt)
	if !f.value(h, fn, 0) {
		return "", false
	}
	e.metBefore(h, t)
	return hex.EncodeToString(h.Sum(nil)), true
}

// metBefore writes what the running cell met before the memo call, which
// fn may depend on without naming it: the live values the cell reads, by
// readID (a URL the cell's body took from a server's handle: the server's
// binary is an input of the cell that started it), and the inputs the cell
// met so far, parameters aside (a server it started itself, its binary and
// scripts; a resource's state). A checkpoint is valid only for the inputs
// of the cell that made it. Parameters reach fn as values, which fn's
// fingerprint holds where fn names them: -p pairs=3 -> 4 keeps the pairs
// measured.
func (e *Engine) metBefore(w hash.Hash, t *starlark.Thread) {
	c := cell(t)
	if def := e.cellNamed(c.Name); def != nil {
		for _, name := range def.Reads {
			if up := e.runs[e.g.definer[name]]; up != nil && up.live() {
				id, _ := readID(up, name)
				fmt.Fprintf(w, "read:%s=%s;", name, id)
			}
		}
	}
	for _, in := range c.metSoFar() {
		if in.Kind != "param" {
			fmt.Fprintf(w, "input:%s:%s=%s;", in.Kind, in.Name, in.Hash)
		}
	}
}

// cellNamed is the code cell of that name, or nil.
func (e *Engine) cellNamed(name string) *CellDef {
	for _, c := range e.g.order {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (f *fprint) value(w hash.Hash, v starlark.Value, depth int) bool {
	if depth > f.maxDepth {
		return false
	}
	switch v := v.(type) {
	case starlark.NoneType, starlark.Bool, starlark.Int, starlark.Float, starlark.String, starlark.Bytes:
		fmt.Fprintf(w, "%s:%s;", v.Type(), v.String())
		return true
	case StateHolder:
		fmt.Fprintf(w, "resource:%s@%s;", v.StateID(), StateOf(f.t, v.StateID()))
		return true
	case *starlark.Function:
		return f.function(w, v, depth)
	case *stateMark:
		fmt.Fprintf(w, "mark:%s", v.fingerprint())
		return true
	case *starlark.Builtin:
		fmt.Fprintf(w, "builtin:%s;", v.Name())
		if r := v.Receiver(); r != nil {
			return f.value(w, r, depth+1)
		}
		return true
	case *starlarkstruct.Module:
		fmt.Fprintf(w, "module:%s;", v.Name)
		return true
	case *starlarkstruct.Struct:
		fmt.Fprint(w, "struct(")
		for _, name := range v.AttrNames() {
			a, _ := v.Attr(name)
			fmt.Fprintf(w, "%s=", name)
			if !f.value(w, a, depth+1) {
				return false
			}
		}
		fmt.Fprint(w, ");")
		return true
	case *starlark.Dict:
		fmt.Fprint(w, "dict(")
		for _, kv := range v.Items() {
			if !f.value(w, kv[0], depth+1) || !f.value(w, kv[1], depth+1) {
				return false
			}
		}
		fmt.Fprint(w, ");")
		return true
	case *starlark.List, starlark.Tuple, *starlark.Set:
		fmt.Fprintf(w, "%s(", v.Type())
		it := v.(starlark.Iterable).Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			if !f.value(w, x, depth+1) {
				return false
			}
		}
		fmt.Fprint(w, ");")
		return true
	}
	// A stored value (a run, a table) by its encoding.
	data, err := codec.Encode(v)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(data)
	fmt.Fprintf(w, "value:%x;", sum[:])
	return true
}

// function identifies a Starlark function by its source text, its free
// variables, its defaults and the globals its body names.
func (f *fprint) function(w hash.Hash, fn *starlark.Function, depth int) bool {
	if f.seen[fn] {
		fmt.Fprintf(w, "rec:%s;", fn.Name())
		return true
	}
	f.seen[fn] = true
	pos := fn.Position()
	text, names, ok := f.e.funcSource(pos)
	if !ok {
		return false
	}
	fmt.Fprintf(w, "func:%s:%s;", pos.Filename(), text)
	for i := 0; i < fn.NumFreeVars(); i++ {
		b, v := fn.FreeVar(i)
		fmt.Fprintf(w, "free:%s=", b.Name)
		if !f.value(w, v, depth+1) {
			return false
		}
	}
	for i := 0; i < fn.NumParams(); i++ {
		if d := fn.ParamDefault(i); d != nil {
			fmt.Fprintf(w, "default:%d=", i)
			if !f.value(w, d, depth+1) {
				return false
			}
		}
	}
	globals := fn.Globals()
	fromNotebook := pos.Filename() == f.e.NB.Path
	for _, name := range names {
		fmt.Fprintf(w, "global:%s=", name)
		if fromNotebook {
			if part, ok := f.e.readPart(name, pos.Line); ok {
				fmt.Fprint(w, part)
				if v, ok := globals[name].(StateHolder); ok {
					fmt.Fprintf(w, "resource:%s@%s;", v.StateID(), StateOf(f.t, v.StateID()))
				}
				continue
			}
		}
		v, ok := globals[name]
		if !ok {
			fmt.Fprint(w, "predeclared;") // a builtin: part of benchbook's version
			continue
		}
		if !f.value(w, v, depth+1) {
			return false
		}
	}
	return true
}

// readPart is how a cell's key names a global of another cell (readID):
// its value hash, or the key and inputs of the live cell that makes it. ok
// is false for a global of the cell at line itself.
func (e *Engine) readPart(name string, line int32) (string, bool) {
	def := e.g.definer[name]
	if def == nil || cellAt(e.NB, line) == def {
		return "", false
	}
	up := e.runs[def]
	if up == nil {
		return "", false
	}
	id, ok := readID(up, name)
	return "read:" + id + ";", ok
}

func cellAt(nb *Notebook, line int32) *CellDef {
	var at *CellDef
	for _, c := range nb.Cells {
		if c.Line <= int(line) {
			at = c
		}
	}
	return at
}

// parsedSource is a Starlark file resolved once for fingerprints.
type parsedSource struct {
	lines []string
	file  *syntax.File
}

// funcSource returns the text of the function defined at pos and the
// global names its body reads, sorted.
func (e *Engine) funcSource(pos syntax.Position) (string, []string, bool) {
	ps := e.parsed(pos.Filename())
	if ps == nil {
		return "", nil, false
	}
	var body syntax.Node
	syntax.Walk(ps.file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DefStmt:
			if samePos(n.Def, pos) {
				body = n
			}
		case *syntax.LambdaExpr:
			if samePos(n.Lambda, pos) {
				body = n
			}
		}
		return body == nil
	})
	if body == nil {
		return "", nil, false
	}
	start, end := body.Span()
	if int(end.Line) > len(ps.lines) || start.Line < 1 {
		return "", nil, false
	}
	text := strings.Join(ps.lines[start.Line-1:end.Line], "\n")
	names := map[string]bool{}
	syntax.Walk(body, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok {
			if b, ok := id.Binding.(*resolve.Binding); ok && (b.Scope == resolve.Global || b.Scope == resolve.Predeclared) {
				names[id.Name] = true
			}
		}
		return true
	})
	return text, sortedKeys(names), true
}

func (e *Engine) parsed(path string) *parsedSource {
	if ps, ok := e.sources[path]; ok {
		return ps
	}
	if e.sources == nil {
		e.sources = map[string]*parsedSource{}
	}
	e.sources[path] = nil
	var src []byte
	var err error
	if path == e.NB.Path {
		src = e.NB.Src
	} else {
		src, err = e.sess.moduleSource(path)
	}
	if err == nil {
		err = checkChains(path, 1, string(src))
	}
	if err != nil {
		return nil
	}
	f, err := fileOptions.Parse(path, src, 0)
	if err != nil {
		return nil
	}
	if err := resolve.File(f, func(string) bool { return true }, starlark.Universe.Has); err != nil {
		return nil
	}
	ps := &parsedSource{lines: strings.Split(string(src), "\n"), file: f}
	e.sources[path] = ps
	return ps
}

// memoNamespace is where a cell's fingerprinted checkpoints live: one
// directory per cell name, so clean keeps them while the cell exists.
func memoNamespace(cellName string) string { return hashString("memo-ns", cellName) }

func samePos(a, b syntax.Position) bool { return a.Line == b.Line && a.Col == b.Col }
