package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"

	"go.starlark.net/starlark"
)

// This file is the contract between the engine and the builtins: everything
// a builtin may ask of the run it is part of, reached through the Thread.

// Input is something a cell depended on that is not in its source: a file it
// read, a binary it started, a git revision it built, a server's version.
// On lookup the engine recomputes Hash through the checker registered for
// Kind; a different hash makes the cached entry stale.
type Input struct {
	Kind string `json:"kind"` // "file", "param", "resource", "binary", ...
	Name string `json:"name"` // path, parameter name, ...
	Hash string `json:"hash"` // content hash or value at run time
}

// InputChecker returns the current hash of an input of its kind.
type InputChecker func(name string) (hash string, err error)

var (
	checkersMu sync.RWMutex
	checkers   = map[string]InputChecker{}
)

// RegisterInputKind tells the engine how to re-check inputs of a kind. Kinds
// without a checker are trusted as recorded (they cannot go stale).
func RegisterInputKind(kind string, check InputChecker) {
	checkersMu.Lock()
	defer checkersMu.Unlock()
	checkers[kind] = check
}

func inputChecker(kind string) InputChecker {
	checkersMu.RLock()
	defer checkersMu.RUnlock()
	return checkers[kind]
}

var (
	predeclaredMu sync.Mutex
	predeclared   = starlark.StringDict{}
)

// Predeclare makes v visible to every notebook under name. Builtin packages
// call it from init; the binary imports them all.
func Predeclare(name string, v starlark.Value) {
	predeclaredMu.Lock()
	defer predeclaredMu.Unlock()
	if _, dup := predeclared[name]; dup {
		panic("runtime: builtin " + name + " declared twice")
	}
	predeclared[name] = v
}

// Predeclared returns a copy of every registered builtin.
func Predeclared() starlark.StringDict {
	predeclaredMu.Lock()
	defer predeclaredMu.Unlock()
	out := make(starlark.StringDict, len(predeclared))
	for k, v := range predeclared {
		out[k] = v
	}
	return out
}

// Session is the state of one benchbook invocation (a run, a REPL): shared
// by every cell it executes.
type Session struct {
	Ctx         context.Context
	Stderr      io.Writer         // progress lines; never part of a record
	NotebookDir string            // relative paths in builtins resolve here
	CacheDir    string            // the notebook's cache directory (.benchbook/NAME)
	Params      map[string]string // -p name=value, as typed on the command line

	memo MemoStore // nil: memo runs fn every time

	loadOnce sync.Once
	load     func(*starlark.Thread, string) (starlark.StringDict, error)

	mu      sync.Mutex
	cleanup []func()
}

// MemoStore keeps memo results; the engine backs it with its cache.
type MemoStore interface {
	Get(cellKey, key string) (starlark.Value, bool)
	Put(cellKey, key string, v starlark.Value) error
}

// Close runs the cleanups registered with AtExit, newest first.
func (s *Session) Close() {
	s.mu.Lock()
	fns := s.cleanup
	s.cleanup = nil
	s.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// Cell is the per-cell state carried by a Thread.
type Cell struct {
	Name string
	Key  string // the cell's cache key; "" outside a notebook

	mu        sync.Mutex
	inputs    []Input
	outputs   []starlark.Value
	warnings  []string
	forceMemo bool // --rerun: ignore memo entries of this cell
}

const (
	sessionKey = "benchbook.session"
	cellKey    = "benchbook.cell"
)

// NewThread returns a thread for running code of cell c in session s.
// Prints are appended to the cell's outputs as text.
func (s *Session) NewThread(c *Cell) *starlark.Thread {
	s.loadOnce.Do(func() { s.load = s.loader() })
	t := &starlark.Thread{Name: c.Name, Load: s.load}
	t.SetLocal(sessionKey, s)
	t.SetLocal(cellKey, c)
	t.Print = func(_ *starlark.Thread, msg string) { c.emit(Printed(msg + "\n")) }
	return t
}

func session(t *starlark.Thread) *Session {
	if s, ok := t.Local(sessionKey).(*Session); ok {
		return s
	}
	return &Session{Ctx: context.Background(), Stderr: io.Discard}
}

func cell(t *starlark.Thread) *Cell {
	if c, ok := t.Local(cellKey).(*Cell); ok {
		return c
	}
	return &Cell{}
}

// Context is cancelled when the user interrupts (Ctrl-C). Builtins that block
// must select on it and return what they have.
func Context(t *starlark.Thread) context.Context {
	if ctx := session(t).Ctx; ctx != nil {
		return ctx
	}
	return context.Background()
}

// Stderr is where live progress goes (a terminal, usually).
func Stderr(t *starlark.Thread) io.Writer {
	if w := session(t).Stderr; w != nil {
		return w
	}
	return io.Discard
}

// Path resolves p against the notebook's directory.
func Path(t *starlark.Thread, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(session(t).NotebookDir, p)
}

// Param returns the command-line value of a parameter.
func Param(t *starlark.Thread, name string) (string, bool) {
	v, ok := session(t).Params[name]
	return v, ok
}

// AddInput records a dynamic input of the running cell.
func AddInput(t *starlark.Thread, in Input) {
	c := cell(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, old := range c.inputs {
		if old == in {
			return
		}
	}
	c.inputs = append(c.inputs, in)
}

// Emit adds a display output (md, table, a figure) to the running cell.
func Emit(t *starlark.Thread, v starlark.Value) { cell(t).emit(v) }

func (c *Cell) emit(v starlark.Value) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := v.(Printed); ok && len(c.outputs) > 0 {
		if last, ok := c.outputs[len(c.outputs)-1].(Printed); ok {
			c.outputs[len(c.outputs)-1] = last + p
			return
		}
	}
	c.outputs = append(c.outputs, v)
}

// emitted reports whether v (the same object) is already among the
// outputs: verdict(...) as a cell's last line both emits and returns itself.
func (c *Cell) emitted(v starlark.Value) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, out := range c.outputs {
		if ro := reflect.ValueOf(out); ro.Kind() == reflect.Pointer && ro.Pointer() == rv.Pointer() {
			return true
		}
	}
	return false
}

// Warn attaches a non-fatal problem to the running cell; it shows in the
// record next to the cell's outputs.
func Warn(t *starlark.Thread, format string, args ...any) {
	c := cell(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// CellName is the name of the running cell ("" outside a notebook).
func CellName(t *starlark.Thread) string { return cell(t).Name }

// CellKey is the cache key of the running cell ("" outside a notebook).
func CellKey(t *starlark.Thread) string { return cell(t).Key }

// ResourceDir returns a directory for a live resource (a cluster's data, a
// process's files) that belongs to the running cell: it survives across
// runs while the cell's key stays the same, and a changed cell gets a fresh
// one. The directory is created if needed.
func ResourceDir(t *starlark.Thread, name string) (string, error) {
	s, c := session(t), cell(t)
	base := s.CacheDir
	if base == "" {
		base = filepath.Join(os.TempDir(), "benchbook")
	}
	owner := c.Name
	if owner == "" {
		owner = "session"
	}
	if c.Key != "" {
		owner += "-" + c.Key[:min(16, len(c.Key))]
	}
	dir := filepath.Join(base, "resources", owner, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("resource dir: %w", err)
	}
	return dir, nil
}

// AtExit registers fn to run when the session ends (normally, on error or on
// Ctrl-C): stop a cluster, kill a target.
func AtExit(t *starlark.Thread, fn func()) {
	s := session(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanup = append(s.cleanup, fn)
}

// Memo returns the value stored for key in the running cell, or calls fn,
// stores its result the moment it returns, and returns it. Experiments
// checkpoint each run with it so an interrupted cell resumes.
func Memo(t *starlark.Thread, key string, fn func() (starlark.Value, error)) (starlark.Value, error) {
	s, c := session(t), cell(t)
	if s.memo != nil && c.Key != "" && !c.forceMemo {
		if v, ok := s.memo.Get(c.Key, key); ok {
			return v, nil
		}
	}
	v, err := fn()
	if err != nil {
		return nil, err
	}
	v.Freeze()
	if Context(t).Err() != nil {
		// Ctrl-C came while fn ran: its result may be partial; never a checkpoint.
		return v, nil
	}
	if s.memo != nil && c.Key != "" {
		if err := s.memo.Put(c.Key, key, v); err != nil {
			Warn(t, "memo %q not stored: %v", key, err)
		}
	}
	return v, nil
}

// Printed is text written by print(); it is an output like any other.
type Printed string

func (p Printed) String() string        { return string(p) }
func (p Printed) Type() string          { return "printed" }
func (p Printed) Freeze()               {}
func (p Printed) Truth() starlark.Bool  { return p != "" }
func (p Printed) Hash() (uint32, error) { return starlark.String(p).Hash() }

// snapshot returns what the cell collected, sorted for stable keys.
func (c *Cell) snapshot() (inputs []Input, outputs []starlark.Value, warnings []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	inputs = append([]Input(nil), c.inputs...)
	sort.Slice(inputs, func(i, j int) bool {
		if inputs[i].Kind != inputs[j].Kind {
			return inputs[i].Kind < inputs[j].Kind
		}
		return inputs[i].Name < inputs[j].Name
	})
	return inputs, append([]starlark.Value(nil), c.outputs...), append([]string(nil), c.warnings...)
}

// Inputs returns the inputs recorded so far (for tests of builtins).
func (c *Cell) Inputs() []Input { in, _, _ := c.snapshot(); return in }

// Outputs returns the outputs emitted so far (for tests of builtins).
func (c *Cell) Outputs() []starlark.Value { _, out, _ := c.snapshot(); return out }

// Warnings returns the warnings so far (for tests of builtins).
func (c *Cell) Warnings() []string { _, _, w := c.snapshot(); return w }
