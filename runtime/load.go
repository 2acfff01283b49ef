package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/stdlib"
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
// the embedded stdlib, anything else relative to the notebook.
func (s *Session) moduleSource(name string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(name, "@std/"); ok {
		src, err := stdlib.FS.ReadFile(rest)
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

// ModuleHash is the hash of a loadable module's source, a part of the key of
// every cell that loads it.
func (s *Session) ModuleHash(name string) (string, error) {
	src, err := s.moduleSource(name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:]), nil
}

type loadEntry struct {
	globals starlark.StringDict
	err     error
}

// loader returns the Thread.Load function of the session: modules are loaded
// once per session and frozen.
func (s *Session) loader() func(*starlark.Thread, string) (starlark.StringDict, error) {
	var mu sync.Mutex
	cache := map[string]*loadEntry{}
	return func(t *starlark.Thread, name string) (starlark.StringDict, error) {
		mu.Lock()
		e, ok := cache[name]
		if ok {
			mu.Unlock()
			if e == nil {
				return nil, fmt.Errorf("cycle in load graph at %q", name)
			}
			return e.globals, e.err
		}
		cache[name] = nil
		mu.Unlock()

		e = &loadEntry{}
		src, err := s.moduleSource(name)
		if err == nil {
			err = checkChains(name, 1, string(src))
		}
		if err != nil {
			e.err = err
		} else {
			sub := &starlark.Thread{Name: "load " + name, Load: t.Load, Print: t.Print}
			for _, k := range []string{sessionKey, cellKey} {
				sub.SetLocal(k, t.Local(k))
			}
			e.globals, e.err = starlark.ExecFileOptions(fileOptions, sub, name, src, Predeclared())
			if e.globals != nil {
				e.globals.Freeze()
			}
		}
		mu.Lock()
		cache[name] = e
		mu.Unlock()
		return e.globals, e.err
	}
}
