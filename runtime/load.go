package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/limits"
)

// fileOptions are the Starlark dialect of notebooks and stdlib modules.
var fileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
	GlobalReassign:  true,
	Recursion:       true,
}

// FileOptions returns the Starlark dialect of notebooks, for code outside the
// engine that runs notebook code (the REPL, the .star test harness), so no
// second copy of it can drift. Each call returns a fresh copy.
func FileOptions() *syntax.FileOptions {
	o := *fileOptions
	return &o
}

// moduleSource returns the source of a loadable module: "@std/x.star" from
// the session's stdlib (Options.Stdlib: the embedded one in benchbook),
// anything else relative to the notebook.
func (s *Session) moduleSource(name string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(name, "@std/"); ok {
		std := s.modules().stdlib
		if std == nil {
			return nil, fmt.Errorf("no stdlib module %q (this session has no stdlib)", name)
		}
		src, err := fs.ReadFile(std, rest)
		if err != nil {
			return nil, fmt.Errorf("no stdlib module %q", name)
		}
		return src, nil
	}
	p := name
	if !strings.HasPrefix(p, "/") && s.NotebookDir != "" {
		p = s.NotebookDir + "/" + p
	}
	return limits.ReadFile(p, limits.File)
}

// ModuleHash is the hash of a loadable module as the key of a cell that
// loads it sees it: its source and, in turn, every module it loads, so that
// editing h2.star, which h1.star loads, changes the key of a cell that loads
// h1.star (the key used to hash direct loads only, and such a cell stayed a
// hit showing what the old h2.star computed). A module that loads nothing
// hashes as its source alone, as before. A module that cannot be read
// fails; one loaded by another that cannot be read is "missing" in the
// other's hash (the cell's run then says why).
func (s *Session) ModuleHash(name string) (string, error) {
	return s.moduleHash(name, map[string]bool{})
}

// moduleHash hashes name and what it loads, each module once (seen): a
// cycle, which loading refuses, still ends here.
func (s *Session) moduleHash(name string, seen map[string]bool) (string, error) {
	seen[name] = true
	src, err := s.moduleSource(name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	own := hex.EncodeToString(sum[:])
	deps := s.moduleLoads(name, own, src)
	if len(deps) == 0 {
		return own, nil
	}
	parts := []string{"benchbook-module", own}
	for _, dep := range deps {
		h := "seen" // hashed above, in this walk (or a cycle, which loading refuses)
		if !seen[dep] {
			if h, err = s.moduleHash(dep, seen); err != nil {
				h = "missing"
			}
		}
		parts = append(parts, dep+"="+h)
	}
	return hashString(parts...), nil
}

// moduleLoads lists the modules a module's source loads, remembered by the
// source's hash: a key is computed for every cell on every run, and a
// module's loads change only with its source.
func (s *Session) moduleLoads(name, sum string, src []byte) []string {
	s.mu.Lock()
	deps, ok := s.loads[sum]
	s.mu.Unlock()
	if ok {
		return deps
	}
	deps = []string{}
	if checkChains(name, 1, string(src)) == nil {
		if f, err := fileOptions.Parse(name, src, 0); err == nil {
			for _, stmt := range f.Stmts {
				if ld, ok := stmt.(*syntax.LoadStmt); ok {
					deps = append(deps, ld.Module.Value.(string))
				}
			}
		}
	}
	s.mu.Lock()
	if s.loads == nil {
		s.loads = map[string][]string{}
	}
	s.loads[sum] = deps
	s.mu.Unlock()
	return deps
}

type loadEntry struct {
	sum     string // ModuleHash of what it was loaded from
	globals starlark.StringDict
	err     error
	inputs  []Input // what its top level met: param(), file(), and its own loads'
}

// loader returns the Thread.Load function of the session: a module is
// loaded once per session and frozen, and again when its source changed
// (a REPL or watch session outlives an edit, and the key already holds the
// new source: running the old one would store its values under it) or an
// input its top level met did (N = param("n", 1) after :params n=2).
//
// What a module's top level meets is an input of every cell that loads it,
// directly or through another module: a cell that finds it loaded already
// gets those inputs too (before, only the first cell to load lib.star
// recorded its param("n"), and -p n=2 reran that cell alone).
func (s *Session) loader() func(*starlark.Thread, string) (starlark.StringDict, error) {
	var mu sync.Mutex
	cache := map[string]*loadEntry{}
	return func(t *starlark.Thread, name string) (starlark.StringDict, error) {
		sum, _ := s.ModuleHash(name) // what it loads in turn included: h1.star is stale when h2.star changed
		mu.Lock()
		e, ok := cache[name]
		if ok && e == nil {
			mu.Unlock()
			return nil, fmt.Errorf("cycle in load graph at %q", name)
		}
		if ok && e.sum == sum && (s.stale == nil || s.stale(e.inputs) == "") {
			mu.Unlock()
			return e.met(t)
		}
		cache[name] = nil
		mu.Unlock()

		e = s.execModule(t, name, sum)
		mu.Lock()
		cache[name] = e
		mu.Unlock()
		return e.met(t)
	}
}

// execModule runs a module's top level, collecting the inputs it meets.
func (s *Session) execModule(t *starlark.Thread, name, sum string) *loadEntry {
	e := &loadEntry{sum: sum}
	src, err := s.moduleSource(name)
	if err == nil {
		err = checkChains(name, 1, string(src))
	}
	if err != nil {
		e.err = err
		return e
	}
	sub := &starlark.Thread{Name: "load " + name, Load: t.Load, Print: t.Print}
	for _, k := range []string{sessionKey, cellKey} {
		sub.SetLocal(k, t.Local(k))
	}
	met := &moduleInputs{}
	sub.SetLocal(moduleInputsKey, met)
	e.globals, e.err = starlark.ExecFileOptions(fileOptions, sub, name, src, s.modules().Globals())
	if e.globals != nil {
		e.globals.Freeze()
	}
	e.inputs = met.inputs
	return e
}

// met records the module's inputs in the loading cell (and in the module
// loading this one, if any) and returns what the load returns.
func (e *loadEntry) met(t *starlark.Thread) (starlark.StringDict, error) {
	for _, in := range e.inputs {
		AddInput(t, in)
	}
	return e.globals, e.err
}

// moduleInputs collects the inputs a module's top level meets (AddInput
// on its loading thread), its own loads' included.
type moduleInputs struct {
	mu     sync.Mutex
	inputs []Input
}

const moduleInputsKey = "benchbook.module-inputs"

func (m *moduleInputs) add(in Input) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.inputs, in) {
		m.inputs = append(m.inputs, in)
	}
}
