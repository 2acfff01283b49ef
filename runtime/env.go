package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/resstate"

	"go.starlark.net/starlark"
)

// This file is the contract between the engine and the builtins: everything
// a builtin may ask of the run it is part of, reached through the Thread.

// Input is something a cell depended on that is not in its source: a file it
// read, a binary it started, a git revision it built, a server's version.
// On lookup the engine recomputes Hash through the checker a module gives
// for Kind (Module.Inputs); a different hash makes the cached entry stale.
type Input struct {
	Kind string `json:"kind"` // "file", "param", "resource", "binary", ...
	Name string `json:"name"` // path, parameter name, ...
	Hash string `json:"hash"` // content hash or value at run time
}

// InputChecker returns the current hash of an input of its kind.
type InputChecker func(name string) (hash string, err error)

// Session is the state of one benchbook invocation (a run, a REPL): shared
// by every cell it executes.
type Session struct {
	Ctx         context.Context
	Stderr      io.Writer         // progress lines; never part of a record
	NotebookDir string            // relative paths in builtins resolve here
	CacheDir    string            // the notebook's cache directory (.benchbook/NAME)
	Params      map[string]string // -p name=value, as typed on the command line
	// Modules are what its code sees and loads: the engine sets its own;
	// nil (a test's bare session) is the engine's Core module alone.
	Modules *ModuleSet

	memo      MemoStore               // nil: memo runs fn every time
	paramSalt []byte                  // the cache's salt for parameter hashes (salt.go); nil without a cache
	defaults  map[string]literalParam // the cells' literal defaults of parameters (paramdefault.go)
	tracker   *resstate.Tracker       // live resources' states; nil outside the engine
	// fingerprint identifies a memoized function's computation (fingerprint.go).
	fingerprint func(*starlark.Thread, starlark.Value) (string, bool)
	// stale says why recorded inputs no longer hold ("" if they do): a
	// module loaded earlier in the session is evaluated again when its
	// top level's inputs changed. nil: they are trusted.
	stale func([]Input) string

	loadOnce sync.Once
	load     func(*starlark.Thread, string) (starlark.StringDict, error)

	tainted atomic.Pointer[map[string]bool] // names whose values flowed from a secret (secrets.go)

	mu      sync.Mutex
	cleanup []func()
	values  map[any]any         // SessionValue's, by key
	loads   map[string][]string // the modules a module's source loads, by the source's hash
}

// MemoStore keeps memo results; the engine backs it with its cache. scope
// names the cell's key and the inputs it had met before the memo call.
type MemoStore interface {
	Get(scope, key string) (*Checkpoint, bool)
	Put(scope, key string, cp *Checkpoint) error
}

// Checkpoint is one memo(key, fn) result with what fn did besides
// returning it: the inputs it met (re-checked before the checkpoint is
// reused, and recorded again in the cell), and the outputs and warnings it
// emitted (shown again), so a resumed cell looks like one that ran whole.
type Checkpoint struct {
	Value    starlark.Value
	Inputs   []Input
	Outputs  []starlark.Value
	Warnings []string
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

	mu       sync.Mutex
	inputs   []Input
	outputs  []starlark.Value
	text     strings.Builder // printed text after the last of outputs, not yet one of them
	printed  int64           // bytes printed so far, kept or not
	dropped  int64           // printed bytes past the limit, not kept
	warnings []string

	forceMemo     bool              // -rerun, :rerun: ignore memo entries of this cell
	secretGlobals bool              // it has a global named like a secret (learnFrames reads them)
	secretCalls   map[callSite]bool // its calls that read a secret (learnFrames)
	st            *resstate.Cell    // what it did to live resources (state.go)
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
	t.Print = func(t *starlark.Thread, msg string) {
		learnFrames(t, starlark.String(msg))
		c.emit(Printed(msg + "\n"))
	}
	return t
}

// SessionValue returns what a builtin keeps for the thread's session under
// key, made by make on first use: per-run state such as the PIDs
// host.observe named or the clusters a REPL started, without a package
// global that would outlive the session or mix two sessions of one process
// (tests, an agent). Use a key of an unexported type, as with
// context.Context, and make the value safe for concurrent use: cells'
// goroutines share it. A thread of no session (a bare starlark.Thread)
// keeps nothing: make is called every time. make runs under the session's
// lock, so it must not call back into the runtime.
func SessionValue[T any](t *starlark.Thread, key any, make func() T) T {
	s, ok := t.Local(sessionKey).(*Session)
	if !ok {
		return make()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.values[key]; ok {
		return v.(T)
	}
	v := make()
	if s.values == nil {
		s.values = map[any]any{}
	}
	s.values[key] = v
	return v
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

// AddInput records a dynamic input of the running cell (and, on the thread
// of a module's top level, of the module: load.go).
func AddInput(t *starlark.Thread, in Input) {
	if m, ok := t.Local(moduleInputsKey).(*moduleInputs); ok {
		m.add(in)
	}
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
func Emit(t *starlark.Thread, v starlark.Value) {
	learnFrames(t, v)
	cell(t).emit(v)
}

// emit appends v to the outputs. Consecutive prints become one output,
// appended to a builder: joining strings instead made a million prints take
// hours (each copied everything printed before it).
func (c *Cell) emit(v starlark.Value) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := v.(Printed); ok {
		c.printLocked(string(p))
		return
	}
	c.flushText()
	c.outputs = append(c.outputs, v)
}

// printLocked keeps printed text up to the value size limit for the whole
// cell (limits.Value, 64 MiB), the bound every value it defines has: 600 MB
// of print took 4.4 GB of memory and left a 765 MB cache entry. Past the
// limit the text is cut at a line end, a notice says so where the cut is,
// and what follows is counted, not kept (snapshot warns with the count).
func (c *Cell) printLocked(s string) {
	limit := limits.Value.Get()
	c.printed += int64(len(s))
	if c.dropped > 0 {
		c.dropped += int64(len(s))
		return
	}
	if c.printed <= limit {
		c.text.WriteString(s)
		return
	}
	keep := s[:limit-(c.printed-int64(len(s)))]
	switch i := strings.LastIndexByte(keep, '\n'); {
	case i >= 0:
		keep = keep[:i+1]
	case c.printed > int64(len(s)):
		keep = "" // the text kept so far ends a line
	default:
		for len(keep) > 0 && !utf8.RuneStart(s[len(keep)]) {
			keep = keep[:len(keep)-1] // one print over the limit: cut between characters
		}
	}
	c.dropped = int64(len(s) - len(keep))
	c.text.WriteString(keep)
	if keep != "" && !strings.HasSuffix(keep, "\n") {
		c.text.WriteString("\n")
	}
	c.text.WriteString(fmt.Sprintf("… printed output cut here: the cell printed more than %s (%s); the rest is not kept\n",
		limits.Value.Format(limit), limits.Value.Hint()))
}

// flushText makes the pending printed text an output. Reset drops the
// builder's buffer without touching it, so the string stays valid.
func (c *Cell) flushText() {
	if c.text.Len() > 0 {
		c.outputs = append(c.outputs, Printed(c.text.String()))
		c.text.Reset()
	}
}

// outputsLocked returns the outputs with the pending text as the last one.
func (c *Cell) outputsLocked() []starlark.Value {
	out := append([]starlark.Value(nil), c.outputs...)
	if c.text.Len() > 0 {
		out = append(out, Printed(c.text.String()))
	}
	return out
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
	for _, out := range c.outputs { // pending text is never a pointer
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
//
// A checkpoint is reused only if fn would see what it saw then. What fn can
// see is the cell's code and read values (the cell's key), plus whatever
// dynamic inputs the cell met before the call (a file read, a parameter, a
// resource's state), which may have shaped fn's closure: the checkpoint's
// scope is the key and those inputs. What fn meets itself is recorded with
// the checkpoint and re-checked before reuse. The inputs met before the call
// are the cell's own up to that point, replayed checkpoints included, so an
// interrupted cell that resumes finds the same scopes again. A checkpoint
// taken while another's fn runs is keyed under that one's key ("abab/2/B/"
// + key), so it belongs to it (enterMemo).
func Memo(t *starlark.Thread, key string, fn func() (starlark.Value, error)) (starlark.Value, error) {
	return memoIn(t, cell(t).memoScope(), key, fn)
}

// MemoCall is memo(key, fn) for a Starlark fn: its checkpoint is keyed by
// what fn computes (fingerprint.go), so it outlives a change of the cell's
// key that fn does not see; else by the cell's key.
func MemoCall(t *starlark.Thread, key string, fn starlark.Callable) (starlark.Value, error) {
	s, c := session(t), cell(t)
	scope := c.memoScope()
	if s.fingerprint != nil && c.Key != "" {
		if fp, ok := s.fingerprint(t, fn); ok {
			scope = c.fingerprintScope(fp)
		}
	}
	return memoIn(t, scope, key, func() (starlark.Value, error) { return starlark.Call(t, fn, nil, nil) })
}

// fingerprintScope is the scope of a fingerprinted checkpoint: the cell's
// name (so clean keeps it while the cell exists) and fn's fingerprint, which
// already holds every value fn can see; inputs fn meets itself are recorded
// with the checkpoint and re-checked, as for any checkpoint.
func (c *Cell) fingerprintScope(fp string) string {
	return memoNamespace(c.Name) + "/" + fp
}

func memoIn(t *starlark.Thread, scope, key string, fn func() (starlark.Value, error)) (starlark.Value, error) {
	s, c := session(t), cell(t)
	key, restore := enterMemo(t, key)
	defer restore()
	if s.memo != nil && c.Key != "" && !c.forceMemo {
		if cp, ok := s.memo.Get(scope, key); ok {
			c.replay(cp)
			return cp.Value, nil
		}
	}
	m := c.mark()
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
		cp := c.since(m)
		cp.Value = v
		if err := s.memo.Put(scope, key, cp); err != nil {
			Warn(t, "memo %q not stored: %v", key, err)
		}
	}
	return v, nil
}

// memoPathKey is the thread local holding the key of the checkpoint whose
// function is running, "" outside any.
const memoPathKey = "benchbook.memo.path"

// enterMemo returns key as the checkpoint's full key, under the key of the
// checkpoint whose function is running (a design inside another: each
// level of a capacity search inside an abab pair), so an inner checkpoint
// belongs to its outer one even when its function sees nothing of it, and
// makes it the running one until restore.
func enterMemo(t *starlark.Thread, key string) (full string, restore func()) {
	outer, _ := t.Local(memoPathKey).(string)
	full = key
	if outer != "" {
		full = outer + "/" + key
	}
	t.SetLocal(memoPathKey, full)
	return full, func() { t.SetLocal(memoPathKey, outer) }
}

// memoScope is the cell's key and the inputs it met so far.
func (c *Cell) memoScope() string {
	inputs := c.metSoFar()
	if len(inputs) == 0 {
		return c.Key
	}
	return c.Key + "/" + inputsHash(inputs)
}

// metSoFar is the inputs the cell met so far, sorted.
func (c *Cell) metSoFar() []Input {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sortInputs(append([]Input(nil), c.inputs...))
}

// outputMark is a position in what a cell collected.
type outputMark struct{ inputs, outputs, text, warnings int }

func (c *Cell) mark() outputMark {
	c.mu.Lock()
	defer c.mu.Unlock()
	return outputMark{len(c.inputs), len(c.outputs), c.text.Len(), len(c.warnings)}
}

// since returns what the cell collected after m.
func (c *Cell) since(m outputMark) *Checkpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := &Checkpoint{
		Inputs:   append([]Input(nil), c.inputs[m.inputs:]...),
		Warnings: append([]string(nil), c.warnings[m.warnings:]...),
	}
	all := c.outputsLocked()[m.outputs:]
	if m.text > 0 && len(all) > 0 {
		// The first is the text pending at m, grown since: keep what was added.
		if rest := string(all[0].(Printed))[m.text:]; rest != "" {
			cp.Outputs = append(cp.Outputs, Printed(rest))
		}
		all = all[1:]
	}
	cp.Outputs = append(cp.Outputs, all...)
	return cp
}

// replay makes a reused checkpoint's inputs, outputs and warnings the
// cell's, as if fn had run.
func (c *Cell) replay(cp *Checkpoint) {
	for _, out := range cp.Outputs {
		c.emit(out)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, in := range cp.Inputs {
		if !slices.Contains(c.inputs, in) {
			c.inputs = append(c.inputs, in)
		}
	}
	c.warnings = append(c.warnings, cp.Warnings...)
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
	inputs = sortInputs(append([]Input(nil), c.inputs...))
	warnings = append([]string(nil), c.warnings...)
	if c.dropped > 0 {
		warnings = append(warnings, fmt.Sprintf("print: %d of the %d bytes printed were not kept (%s)", c.dropped, c.printed, limits.Value.Hint()))
	}
	return inputs, c.outputsLocked(), warnings
}

// sortInputs orders inputs by kind, name and hash, for stable keys.
func sortInputs(inputs []Input) []Input {
	sort.Slice(inputs, func(i, j int) bool {
		a, b := inputs[i], inputs[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Hash < b.Hash
	})
	return inputs
}

// Inputs returns the inputs recorded so far (for tests of builtins).
func (c *Cell) Inputs() []Input { in, _, _ := c.snapshot(); return in }

// Outputs returns the outputs emitted so far (for tests of builtins).
func (c *Cell) Outputs() []starlark.Value { _, out, _ := c.snapshot(); return out }

// Warnings returns the warnings so far (for tests of builtins).
func (c *Cell) Warnings() []string { _, _, w := c.snapshot(); return w }

// Forced reports whether the thread's cell runs because the user asked
// for it (-rerun NAME, -rerun-all, :rerun NAME): a builtin that keeps its
// own cache outside the engine's (build's binaries) makes its work anew
// then, as memo does.
func Forced(t *starlark.Thread) bool {
	c, ok := t.Local(cellKey).(*Cell)
	return ok && c.forceMemo
}
