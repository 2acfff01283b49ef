package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchbook/benchbook/runtime/resstate"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Options configure an Engine.
type Options struct {
	CacheDir string            // default: DefaultCacheDir(notebook)
	Params   map[string]string // -p name=value
	Rerun    []string          // cells to execute even if cached
	RerunAll bool
	Stderr   io.Writer // progress lines; nil: discard
	Color    bool      // colour the progress lines
	Version  string    // benchbook version, stored with every entry
	Args     []string  // the command line, for the record's provenance
	// OnCell, when set, is told when a cell starts executing (started) and
	// each cell's outcome, in place of the progress lines on Stderr (the
	// Jupyter kernel shows its own).
	OnCell func(st *CellRun, started bool)
	// Modules are the builtin modules the notebook sees beside the
	// engine's own (Core), and Stdlib what it loads as "@std/NAME" (nil:
	// none): the host's choice, so the engine imports no builtin
	// (cmd/benchbook/modules.go lists benchbook's).
	Modules []Module
	Stdlib  fs.FS
	// NoWait makes Open fail with ErrLocked when another process holds the
	// cache's lock, instead of waiting for it (a kernel that has not been
	// told its notebook takes another cache rather than share one).
	NoWait bool
}

// Status is what happened to a cell: hit, ran, live, error, skipped, never
// (render only) or stale (planning only). It is record.Status, so the
// engine, the records and the CLI share one list.
type Status = record.Status

// The statuses of a cell.
const (
	StatusHit     = record.StatusHit
	StatusRan     = record.StatusRan
	StatusLive    = record.StatusLive
	StatusError   = record.StatusError
	StatusSkipped = record.StatusSkipped
	StatusNever   = record.StatusNever
	StatusStale   = record.StatusStale
)

// CellRun is what the engine knows of one cell in this run: its status,
// why, its key and, once loaded or executed, its values. ("State" means one
// thing in this package: the state of a live resource, see resstate.)
type CellRun struct {
	Def      *CellDef
	Status   Status
	Why      string
	Key      string
	Err      error  // "file:line:col: msg (in cell NAME)"
	Trace    string // Starlark backtrace
	Executed bool   // executed in this process
	// Until names the stale cell whose run decides this one's status when
	// a plan cannot tell hit from stale before it runs (its values may
	// come out the same, the state it leaves may be the one this cell's
	// entry ran on); "" when the plan knows.
	Until string

	entry    *entry              // from the cache or just written
	values   starlark.StringDict // nil until loaded or computed
	hashes   map[string]string   // value hash by name, read by downstream keys
	outputs  []starlark.Value
	inputs   []Input
	warnings []string
	expectIn map[string]string // resource states the notebook order gives the cell
	started  time.Time
	duration time.Duration
	host     hostinfo.Host
	scrubbed uint64 // the redactor's generation its entry was masked at (rescrub)
}

// Engine executes one notebook against its cache.
type Engine struct {
	NB        *Notebook
	opts      Options
	g         *graph
	store     *store
	sess      *Session
	mods      *ModuleSet
	builtins  starlark.StringDict // mods' globals
	runs      map[*CellDef]*CellRun
	computed  map[string]*CellRun      // by key: cells whose values this process holds
	scratch   starlark.StringDict      // the REPL's own globals
	force     *CellDef                 // RunCell(name, RunAgain or RunForced): this cell runs even if cached
	forceMode RunMode                  // which of the two
	prev      map[string]cellMemory    // what the last run knew, to say why a cell is stale
	listings  map[string]listing       // the cells' listings as last shown (listing.go)
	tainted   [2]map[string]bool       // the notebook's tainted names, the REPL input's (secrets.go)
	sources   map[string]*parsedSource // files resolved for memo fingerprints
	unlock    func()

	temps     int   // temp files of killed runs removed when the cache opened
	tempBytes int64 // their size

	host   hostinfo.Host // the last hostNow, read at hostAt
	hostAt time.Time

	Interrupted bool
	Warnings    []string // engine-level warnings (damaged entries, unused params)
}

// ErrNoCell is a cell name (-rerun NAME) that the notebook does not have.
var ErrNoCell = errors.New("no code cell of that name")

// DefaultCacheDir is where a notebook's cache lives: .benchbook/NAME beside
// it, one per notebook, so notebooks sharing a directory neither clean away
// nor lock out each other's entries, nor explain misses with each other's.
func DefaultCacheDir(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return filepath.Join(filepath.Dir(path), ".benchbook", name)
}

// Open parses nothing (the notebook is given), builds the cell graph, opens
// the cache and takes its lock.
func Open(ctx context.Context, nb *Notebook, opts Options) (*Engine, error) {
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	dir := filepath.Dir(nb.Path)
	if opts.CacheDir == "" {
		opts.CacheDir = DefaultCacheDir(nb.Path)
	}
	mods, err := NewModuleSet(opts.Stdlib, opts.Modules...)
	if err != nil {
		return nil, err
	}
	e := &Engine{NB: nb, opts: opts, mods: mods, builtins: mods.Globals(), runs: map[*CellDef]*CellRun{}, computed: map[string]*CellRun{}}
	for _, name := range opts.Rerun {
		if !slices.ContainsFunc(nb.Cells, func(c *CellDef) bool { return c.Name == name && !c.Markdown }) {
			return nil, fmt.Errorf("-rerun %s: %w in %s", name, ErrNoCell, nb.Path)
		}
	}
	g, err := buildGraph(nb, e.builtins)
	if err != nil {
		return nil, err
	}
	e.g = g
	if e.store, err = openStore(opts.CacheDir); err != nil {
		return nil, err
	}
	if e.unlock, err = lock(ctx, opts.CacheDir, opts.NoWait, func(msg string) { fmt.Fprintln(opts.Stderr, msg) }); err != nil {
		return nil, err
	}
	// A run killed mid-write (SIGKILL) leaves temp files that no rename
	// will ever claim; holding the lock, no live writer owns one.
	e.temps, e.tempBytes = e.store.removeTemps()
	salt, err := loadSalt(e.store.dir)
	if err != nil {
		e.unlock()
		return nil, err
	}
	e.sess = &Session{Ctx: ctx, Stderr: opts.Stderr, NotebookDir: dir, CacheDir: opts.CacheDir, Params: opts.Params, Modules: mods, paramSalt: salt}
	e.sess.defaults = paramDefaults(nb)
	e.sess.memo = memoStore{s: e.store, types: mods.decoders, warn: e.warn, stale: e.staleInput, written: &memoWrites{}}
	e.setTainted(learnSecrets(nb, opts.Params))
	e.sess.fingerprint = e.fingerprint
	e.sess.stale = e.staleOther
	e.sess.tracker = resstate.New(func(msg string) { fmt.Fprintln(opts.Stderr, msg) }, record.FormatDuration)
	e.prev = e.loadMemory()
	e.listings = e.loadListings()
	return e, nil
}

// Close stops what the notebook started (clusters, targets) and releases the
// cache lock.
func (e *Engine) Close() {
	e.sess.Close()
	if e.unlock != nil {
		e.unlock()
		e.unlock = nil
	}
}

func (e *Engine) warn(msg string) {
	e.Warnings = append(e.Warnings, msg)
	fmt.Fprintf(e.opts.Stderr, "warning: %s\n", msg)
}

// Run brings every cell up to date: cached cells are hits, stale ones are
// executed in dependency order. With execute false nothing runs: cells are
// hits, live, or never computed (the render command).
func (e *Engine) Run(execute bool) {
	e.runs = map[*CellDef]*CellRun{}
	e.sess.tracker.StartWalk()
	for _, c := range e.g.order {
		st := e.plan(c)
		if st.Status == StatusStale {
			switch {
			case e.Interrupted:
				st.Status, st.Why = StatusSkipped, "interrupted before it ran"
			case !execute && st.entry != nil && c.Options["cache"] == "false":
				// Shown from its last execution, which is what it would do.
				st.Status, st.Why = StatusRan, "cache=false; shown from its last run"
			case !execute:
				st.Status = StatusNever
			default:
				e.execute(st)
			}
		}
		e.advance(st)
		e.progress(st)
	}
	e.checkParams()
	e.rescrub()
	e.saveMemory()
	if execute {
		e.saveListings()
	}
	if execute {
		e.saveParams()
	}
}

// paramsFile holds the parameters of the notebook's last run, so that
// render, cells and index can show that run rather than the defaults.
const paramsFile = "last-params.json"

func (e *Engine) saveParams() {
	p := map[string]string{}
	for name, v := range e.opts.Params {
		p[name] = v
		if redact.SecretName(name) || redact.String(v) != v {
			p[name] = withheldParam + strings.TrimPrefix(e.sess.paramHash(v), "set:")
		}
	}
	if err := writeChecked(filepath.Join(e.store.dir, paramsFile), p); err != nil {
		e.warn(fmt.Sprintf("last run's parameters not saved: %v", err))
	}
}

// LastParams returns the parameters of the last run whose cache is
// cacheDir: nil when there was none, an empty map for the defaults.
func LastParams(cacheDir string) map[string]string {
	var p map[string]string
	path := filepath.Join(cacheDir, "v"+strconv.Itoa(FormatVersion), paramsFile)
	if err := readChecked(path, &p); err != nil {
		return nil
	}
	return p
}

// State returns the state of the named cell (nil if unknown).
func (e *Engine) CellRun(name string) *CellRun {
	for c, st := range e.runs {
		if c.Name == name {
			return st
		}
	}
	return nil
}

// plan decides a cell's status without executing it.
func (e *Engine) plan(c *CellDef) *CellRun {
	st := &CellRun{Def: c, expectIn: e.sess.tracker.ExpectNow()}
	e.runs[c] = st
	for _, up := range e.g.up[c] {
		switch u := e.runs[up]; u.Status {
		case StatusError, StatusSkipped:
			st.Status, st.Why = StatusSkipped, "upstream cell "+up.Name+" did not complete"
			return st
		case StatusNever:
			st.Status, st.Why = StatusNever, "upstream cell "+up.Name+" not computed"
			return st
		case StatusStale:
			st.Status, st.Why = StatusStale, "upstream cell "+up.Name+" is stale"
			if _, computed := e.prev[c.Name]; computed {
				st.Until, st.Why = up.Name, "unknown until cell "+up.Name+" runs (upstream and stale: a hit if its values come out the same)"
				if u.Until != "" {
					st.Until, st.Why = u.Until, "unknown until cell "+u.Until+" runs (upstream cell "+up.Name+" depends on it)"
				}
			}
			return st
		}
	}
	st.Key = e.key(c)
	forced := e.forced(c)
	if prev := e.computed[st.Key]; prev != nil && !forced && e.staleInput(prev.inputs) == "" {
		// Computed earlier in this process (the REPL): reuse, live values included.
		cp := *prev
		cp.Def, cp.Executed, cp.expectIn = c, false, st.expectIn
		if cp.Status == StatusRan {
			cp.Status, cp.Why = StatusHit, "computed earlier in this session"
		}
		e.runs[c] = &cp
		return &cp
	}
	switch {
	case forced:
		st.Status, st.Why = StatusStale, e.forcedWhy(c)
	case c.Options["cache"] == "false":
		// Its last execution is kept for render, cells and index.
		e.lookup(st)
		st.Status, st.Why = StatusStale, "cache=false"
	default:
		e.lookup(st)
	}
	return st
}

// lookup finds a cell's entry and checks its dynamic inputs.
func (e *Engine) lookup(st *CellRun) {
	ent, err := e.store.get(st.Key)
	if err != nil {
		e.warn(fmt.Sprintf("cell %s: %v; recomputing", st.Def.Name, err))
		st.Status, st.Why = StatusStale, "cache entry damaged"
		return
	}
	if ent == nil {
		st.Status, st.Why = StatusStale, e.whyMiss(st)
		return
	}
	why := e.staleInput(ent.Inputs)
	if why != "" {
		v := e.store.getVariant(st.Key, func(in []Input) bool { return e.staleInput(in) == "" })
		if v == nil {
			st.Status, st.Why = StatusStale, why
			if until := e.sess.tracker.Until(effects(ent.Inputs)); until != "" {
				if other := e.staleOther(ent.Inputs); other != "" {
					st.Why = other // stale whatever the state turns out to be
				} else {
					st.Until = until
				}
			}
			return
		}
		ent = v // an earlier execution with today's inputs
	}
	st.entry, st.hashes = ent, ent.Hashes
	st.inputs, st.warnings = ent.Inputs, ent.Warnings
	st.started, st.duration, st.host = ent.Started, ent.Duration, ent.Host
	st.outputs = e.decodeOutputs(ent.Outputs)
	if ent.Live {
		st.Status, st.Why = StatusLive, "holds live values; runs when a stale cell needs them"
		return
	}
	st.Status, st.Why = StatusHit, "cached"
}

// staleInput re-checks recorded inputs; it returns why the entry is stale.
func (e *Engine) staleInput(inputs []Input) string {
	if why := e.staleStates(inputs); why != "" {
		return why
	}
	return e.staleOther(inputs)
}

// staleOther re-checks the inputs other than resource states.
func (e *Engine) staleOther(inputs []Input) string {
	for _, in := range inputs {
		var now string
		if in.Kind == "param" {
			now = e.paramValue(in.Name)
		} else if check := e.mods.inputs[in.Kind]; check != nil {
			h, err := check(in.Name)
			if err != nil {
				return fmt.Sprintf("input %s %s: %v", in.Kind, in.Name, err)
			}
			now = h
		} else {
			continue
		}
		if now != in.Hash {
			return fmt.Sprintf("input changed: %s %s", in.Kind, in.Name)
		}
	}
	return ""
}

// paramValue is how a parameter enters keys and input hashes: as a salted
// hash (salt.go), so that no entry, checkpoint or state.json holds a
// secret's text, nor a hash to try passwords against.
// A parameter set to its literal default is the default (paramdefault.go).
func (e *Engine) paramValue(name string) string { return e.sess.paramValue(name) }

// withheldParam starts the value, in Params, of a secret parameter of the
// last run (a password in a DSN, a parameter named token): last-params.json
// keeps its hash only, which finds the run's entries (render, cells) but
// cannot run a cell. A command-line value never holds a NUL byte, so no
// real value is mistaken for one.
const withheldParam = "\x00withheld:"

// ShownParams is the parameters as a record or a terminal may show them:
// secrets masked.
func ShownParams(p map[string]string) map[string]string {
	out := redact.Params(p)
	for name, v := range p {
		if strings.HasPrefix(v, withheldParam) {
			out[name] = redact.Mask
		}
	}
	return out
}

// values returns a cell's globals, loading them from the cache or running a
// live cell first.
func (e *Engine) values(c *CellDef) (starlark.StringDict, error) {
	st := e.runs[c]
	if st.values != nil {
		return st.values, nil
	}
	if st.Status == StatusLive && !st.Executed {
		st.Why = "live values needed downstream"
		e.execute(st)
		e.progress(st)
		if st.Err != nil {
			return nil, fmt.Errorf("cell %s failed: %w", c.Name, st.Err)
		}
		return st.values, nil
	}
	if st.entry == nil {
		return nil, fmt.Errorf("cell %s has no values (status %s)", c.Name, st.Status)
	}
	vals := starlark.StringDict{}
	for name, data := range st.entry.Values {
		v, err := codec.Decode(data, e.mods.decoders)
		if err != nil {
			return nil, fmt.Errorf("cell %s: value %s: %w", c.Name, name, err)
		}
		vals[name] = v
	}
	st.values = vals
	e.computed[st.Key] = st
	return vals, nil
}

func (e *Engine) decodeOutputs(raw [][]byte) []starlark.Value {
	out := make([]starlark.Value, 0, len(raw))
	for _, data := range raw {
		v, err := codec.Decode(data, e.mods.decoders)
		if err != nil {
			v = Printed(fmt.Sprintf("(output not readable: %v)", err))
		}
		out = append(out, v)
	}
	return out
}

// interrupted reports whether err comes from Ctrl-C.
func interrupted(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) || ctx.Err() != nil
}

// forced reports whether c must execute even if cached (-rerun, -rerun-all,
// or the REPL's :run NAME and :rerun NAME).
func (e *Engine) forced(c *CellDef) bool {
	return e.opts.RerunAll || slices.Contains(e.opts.Rerun, c.Name) || e.force == c
}

// forcedMemo reports whether c's memo checkpoints are ignored: -rerun,
// -rerun-all and :rerun NAME; :run NAME resumes the ones that hold.
func (e *Engine) forcedMemo(c *CellDef) bool {
	return e.forced(c) && (e.force != c || e.forceMode == RunForced)
}

// forcedWhy names what forced c, spelt as the user typed it.
func (e *Engine) forcedWhy(c *CellDef) string {
	switch {
	case e.force == c && e.forceMode == RunAgain:
		return "run again (:run " + c.Name + "; valid checkpoints reused)"
	case e.force == c:
		return "forced (:rerun " + c.Name + ")"
	case slices.Contains(e.opts.Rerun, c.Name):
		return "forced (-rerun " + c.Name + ")"
	}
	return "forced (-rerun-all)"
}

// CacheDir is the notebook's cache directory.
func (e *Engine) CacheDir() string { return e.opts.CacheDir }
