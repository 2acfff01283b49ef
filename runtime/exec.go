package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/redact"
)

// execute runs one cell and stores its entry the moment it finishes.
// frames keeps a Starlark backtrace's header and call frames and drops its
// closing "Error in f: msg", which st.Err already says: every error would
// otherwise print twice, in the terminal and in the record.
// A runaway recursion's trace (Starlark stops it near 100,000 frames) keeps
// its first and last maxFrames/2 frames: the whole one made a 2 MB record.
func frames(bt string) string {
	var keep []string
	for i, line := range strings.Split(bt, "\n") {
		if i > 0 && !strings.HasPrefix(line, "  ") {
			break
		}
		keep = append(keep, line)
	}
	if n := len(keep) - 1 - maxFrames; n > 0 {
		elided := fmt.Sprintf("  ... %d frames not shown ...", n)
		keep = append(append(keep[:1+maxFrames/2:1+maxFrames/2], elided), keep[len(keep)-maxFrames/2:]...)
	}
	return strings.Join(keep, "\n")
}

// maxFrames is the most call frames an error's trace shows.
const maxFrames = 40

func (e *Engine) execute(st *CellRun) {
	c := st.Def
	st.Executed = true
	globals, err := e.cellGlobals(c)
	if err != nil {
		st.Status, st.Err = StatusError, err
		return
	}
	e.starting(st)
	cell := &Cell{Name: c.Name, Key: st.Key, forceMemo: e.forcedMemo(c), secretGlobals: hasSecretName(e.sess.taintedNames(), c.Defines, c.private, c.Reads), secretCalls: secretCalls(c.flow.calls, e.sess.taintedNames())}
	e.enterStates(cell, st)
	thread := e.sess.NewThread(cell)
	st.host = e.hostNow()
	st.started = time.Now()
	stop := make(chan struct{})
	go cancelWithGrace(e.sess.Ctx, thread, stop)
	err = e.touchReads(thread, c, globals)
	if err == nil {
		err = e.runCell(thread, c, globals)
	}
	close(stop)
	if err == nil {
		err = e.leaveStates(cell)
	}
	st.duration = time.Since(st.started)
	st.inputs, st.outputs, st.warnings = cell.snapshot()
	learnCell(c, globals, st.outputs, e.sess.taintedNames()) // failed or not: its outputs are shown
	st.warnings = append(append([]string(nil), c.lint...), st.warnings...)
	if berr := boundOutputs(c.Name, st.outputs); err == nil {
		err = berr
	}
	if err == nil {
		err = boundValues(c.Name, c.Defines, globals)
	}
	if err != nil {
		st.Status, st.Err = StatusError, err
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			st.Err = fmt.Errorf("%s (in cell %s)", ee.Msg, c.Name)
			st.Trace = frames(ee.Backtrace())
		}
		if interrupted(e.sess.Ctx, err) {
			e.Interrupted = true
			st.Why = "interrupted"
		}
		return
	}
	st.values = starlark.StringDict{}
	for _, name := range c.Defines {
		if v, ok := globals[name]; ok {
			v.Freeze()
			st.values[name] = v
		}
	}
	if e.Interrupted = e.sess.Ctx.Err() != nil; e.Interrupted {
		// A builtin returned what it had when Ctrl-C came: show it, keep no entry.
		st.Status, st.Why = StatusError, "interrupted"
		st.Err = errors.New("interrupted (partial results shown, not cached)")
		return
	}
	e.store1(st)
	e.computed[st.Key] = st
	if r := cell.RestoreSummary(); r != "" {
		st.Why += "; " + r
	}
}

// hostNow is the host and its load average for a cell starting now, read
// again once hostEvery has passed: the kernel recomputes the load average
// every 5 s, and reading /proc/loadavg for each cell took nine system
// calls, 7 % of a cold 3,000-cell run's CPU (issue 38).
func (e *Engine) hostNow() hostinfo.Host {
	if now := time.Now(); now.Sub(e.hostAt) >= hostEvery || now.Before(e.hostAt) {
		e.host, e.hostAt = hostinfo.Read(), now
	}
	return e.host
}

const hostEvery = time.Second

// cancelGrace is how long a builtin has, after Ctrl-C, to return what it
// measured before the Starlark thread itself is cancelled.
const cancelGrace = 500 * time.Millisecond

// cancelWithGrace cancels thread a moment after ctx ends, unless stop
// closes first: builtins see the context at once and return their partial
// results, which the cell may still display; a Starlark loop that calls no
// builtin is stopped by the thread cancellation.
func cancelWithGrace(ctx context.Context, thread *starlark.Thread, stop <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-stop:
		return
	}
	select {
	case <-time.After(cancelGrace):
		thread.Cancel("interrupted")
	case <-stop:
	}
}

// cellGlobals builds the environment of a cell: the builtins and the values
// of the names it reads.
func (e *Engine) cellGlobals(c *CellDef) (starlark.StringDict, error) {
	globals := make(starlark.StringDict, len(e.builtins)+len(c.Reads))
	for k, v := range e.builtins {
		globals[k] = v
	}
	for _, name := range c.Reads {
		def := e.g.definer[name]
		vals, err := e.values(def)
		if err != nil {
			return nil, err
		}
		v, ok := vals[name]
		if !ok {
			return nil, fmt.Errorf("cell %s did not define %s (is it assigned on every path?)", def.Name, name)
		}
		globals[name] = v
	}
	return globals, nil
}

// runCell executes the statements of a cell; a final expression statement is
// evaluated separately so its value can be displayed, as in Jupyter.
func (e *Engine) runCell(thread *starlark.Thread, c *CellDef, globals starlark.StringDict) error {
	f, err := parseCell(e.NB.Path, c)
	if err != nil {
		return err
	}
	return e.runFile(thread, f, globals)
}

// runFile executes parsed statements against globals, displaying the value
// of a final expression statement.
func (e *Engine) runFile(thread *starlark.Thread, f *syntax.File, globals starlark.StringDict) error {
	var last *syntax.ExprStmt
	if n := len(f.Stmts); n > 0 {
		if es, ok := f.Stmts[n-1].(*syntax.ExprStmt); ok && !isCallOf(es.X, "print") {
			last = es
			f.Stmts = f.Stmts[:n-1]
		}
	}
	if len(f.Stmts) > 0 {
		if err := starlark.ExecREPLChunk(f, thread, globals); err != nil {
			return err
		}
	}
	if last == nil {
		return nil
	}
	v, err := starlark.EvalExprOptions(fileOptions, thread, last.X, globals)
	if err != nil {
		return err
	}
	if v != starlark.None && !cell(thread).emitted(v) {
		if readsSecret(identsIn(last.X), session(thread).taintedNames()) {
			redact.LearnDerived(v) // the cell's last expression made of a secret: tok[::-1]
		}
		Emit(thread, v)
	}
	return nil
}

func isCallOf(x syntax.Expr, name string) bool {
	call, ok := x.(*syntax.CallExpr)
	if !ok {
		return false
	}
	id, ok := call.Fn.(*syntax.Ident)
	return ok && id.Name == name
}

// store1 encodes a finished cell and writes its entry. A cell whose values
// cannot be stored becomes live: its outputs are kept, its values are not.
func (e *Engine) store1(st *CellRun) {
	ent := &entry{
		Format: FormatVersion, Cell: st.Def.Name, Key: st.Key,
		Values: map[string][]byte{}, Hashes: map[string]string{},
		Inputs: st.inputs, Warnings: st.warnings,
		Started: st.started, Duration: st.duration, Host: st.host, Version: e.opts.Version,
	}
	st.Status, st.scrubbed = StatusRan, redact.Generation()
	if st.Why == "" {
		st.Why = "executed"
	}
	names := make([]string, 0, len(st.values))
	for name := range st.values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, secret := redact.Value(st.values[name]); secret {
			ent.Live, st.Status = true, StatusLive
			st.Why = fmt.Sprintf("ran; %s holds a secret, never written to disk", name)
			ent.Values, ent.Hashes = nil, nil
			break
		}
		data, err := codec.Encode(st.values[name])
		if errors.Is(err, codec.ErrNotStorable) {
			ent.Live = true
			st.Status = StatusLive
			st.Why = fmt.Sprintf("ran; %s holds a live value (%s)", name, st.values[name].Type())
			ent.Values, ent.Hashes = nil, nil
			break
		}
		if err != nil {
			e.warn(fmt.Sprintf("cell %s: value %s not stored: %v", st.Def.Name, name, err))
			ent.Live, st.Status = true, StatusLive
			ent.Values, ent.Hashes = nil, nil
			break
		}
		sum := sha256.Sum256(data)
		ent.Values[name] = data
		ent.Hashes[name] = hex.EncodeToString(sum[:])
	}
	if ent.Live {
		ent.Identities = e.identities(st.values)
	}
	st.outputs, st.warnings = redactOutputs(st.outputs), redactAll(st.warnings)
	ent.Warnings = st.warnings
	for _, out := range st.outputs {
		data, err := codec.Encode(out)
		if err != nil {
			data, _ = codec.Encode(Printed(redact.String(out.String()))) // a handle's display: its argv, a DSN
		}
		ent.Outputs = append(ent.Outputs, data)
	}
	st.entry, st.hashes = ent, ent.Hashes
	// cache=false cells are stored too: never a hit, but render, cells and
	// index show their last outputs.
	if err := e.store.put(ent); err != nil {
		e.warn(fmt.Sprintf("cell %s: not cached: %v", st.Def.Name, err))
	}
}
