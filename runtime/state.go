package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// This file tracks the state of live resources (a PostgreSQL cluster, a
// SQLite file) as a value of the notebook: see "Live resources" in doc.go.

// Input kinds the engine writes for resources; each names the resource's ID.
const (
	inputState    = "state"     // the state the cell ran on (checked on lookup)
	inputStateOut = "state-out" // the state the cell left, when it changed it
	inputStateNew = "state-new" // the cell created the resource in this state
)

// Resource is a live system whose data is part of the notebook's state. A
// builtin registers it with RegisterResource when a cell creates or reuses
// it and calls Touch before every use.
type Resource struct {
	ID      string // absolute directory of the resource; its snapshots live in ID/states
	Name    string // for messages: "postgres of cell cluster"
	Initial string // the state identity of its data when created (a hash of its spec)
	Created bool   // its data was created just now: it is in state Initial
	Outside bool   // its data was changed outside benchbook since benchbook last saw it

	Save func(dir string) error // copy the data into dir (a snapshot)
	Load func(dir string) error // put the data of snapshot dir back
	// Moved reports whether the data may have changed since the last Mark
	// (PostgreSQL: the WAL insert position moved); Mark sets that point.
	Moved func() bool
	Mark  func()
}

// stateLimit bounds the bytes of state snapshots kept per resource; the
// least recently used go first. BENCHBOOK_STATE_LIMIT (bytes) overrides it.
const stateLimit = 8 << 30

// stateFile holds the identity of the state the resource's data is in now.
const stateFile = "state-id"

// tracker is the session's view of its resources: what each one holds now
// and, as the engine walks the cells in order, what each should hold.
type tracker struct {
	mu     sync.Mutex
	res    map[string]*tracked
	expect map[string]string // resource ID -> state at the current point of the walk ("" unknown)
	pins   map[string]bool   // states the running cell entered or marked: never evicted
	say    func(string)      // a progress line
	limit  int64
}

type tracked struct {
	r      *Resource
	actual string // the state its data is in; "dirty:..." when unknown to any entry
}

func newTracker(say func(string)) *tracker {
	limit := int64(stateLimit)
	if v := os.Getenv("BENCHBOOK_STATE_LIMIT"); v != "" {
		fmt.Sscan(v, &limit)
	}
	return &tracker{res: map[string]*tracked{}, expect: map[string]string{}, pins: map[string]bool{}, say: say, limit: limit}
}

// cellStates is what one executing cell did to resources.
type cellStates struct {
	expect   map[string]string // the states the notebook order gives this cell
	entered  map[string]string // first touch: the state the cell ran on
	mark     map[string]string // resources.mark(): the experiment's start state
	restored []string          // "postgres of cell cluster: state ab12 restored ..."
	changes  map[string]int    // change operations per resource
	order    []string          // touched resources, in order
	marks    int               // resources.mark() calls so far
	repl     bool              // a REPL input: no walk, no restore
	nonce    string            // cache=false: every execution leaves a new state
}

func stateSession(t *starlark.Thread) (*tracker, *Cell) {
	return session(t).states, cell(t)
}

// RegisterResource makes a resource known to the session. The running cell
// records that it created the resource in state r.Initial.
func RegisterResource(t *starlark.Thread, r *Resource) error {
	tr, c := stateSession(t)
	if tr == nil {
		return nil
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	x := tr.res[r.ID]
	if x == nil {
		x = &tracked{r: r, actual: readStateID(r.ID)}
		tr.res[r.ID] = x
	}
	x.r = r
	if r.Created || x.actual == "" {
		x.actual = r.Initial
	}
	if r.Outside {
		tr.say(fmt.Sprintf("%s: its data changed outside benchbook; cells restore their states before they use it", r.Name))
		x.actual = "outside:" + nonce()
	}
	writeStateID(r.ID, x.actual)
	if _, ok := tr.expect[r.ID]; !ok {
		tr.expect[r.ID] = r.Initial
	}
	cs := c.states()
	if _, ok := cs.expect[r.ID]; !ok && !cs.repl {
		cs.expect[r.ID] = r.Initial
	}
	AddInput(t, Input{Kind: inputStateNew, Name: r.ID, Hash: r.Initial})
	if x.actual == r.Initial && !hasSnapshot(r.ID, r.Initial) {
		// The state every cell of this resource starts from: keep it.
		return tr.snapshot(x, r.Initial)
	}
	return nil
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
	tr.mu.Lock()
	defer tr.mu.Unlock()
	x := tr.res[id]
	if x == nil {
		return nil
	}
	cs := c.states()
	if _, ok := cs.entered[id]; !ok {
		if err := tr.enter(x, c, cs); err != nil {
			return err
		}
		AddInput(t, Input{Kind: inputState, Name: id, Hash: cs.entered[id]})
	}
	if change {
		tr.dirty(x, c, cs)
	}
	return nil
}

// enter brings x into the state the cell should see and records it.
func (tr *tracker) enter(x *tracked, c *Cell, cs *cellStates) error {
	id := x.r.ID
	want := cs.expect[id]
	if cs.mark != nil {
		if m, ok := cs.mark[id]; ok {
			want = m
		}
	}
	if cs.repl || want == "" {
		want = x.actual
	}
	if x.actual != want {
		if err := tr.restore(x, want, c.Name, cs); err != nil {
			return err
		}
	}
	cs.entered[id] = want
	cs.order = append(cs.order, id)
	tr.pins[want] = true
	if x.r.Mark != nil {
		x.r.Mark()
	}
	return nil
}

// dirty marks x as changed by the running cell: its data is in a state no
// entry knows until the cell finishes.
func (tr *tracker) dirty(x *tracked, c *Cell, cs *cellStates) {
	id := x.r.ID
	cs.changes[id]++
	d := "dirty:" + hashString(cs.entered[id], c.Key, cs.nonce, fmt.Sprint(cs.marks, cs.changes[id]))[:16]
	if c.Key == "" {
		d = "dirty:" + nonce()
	}
	if x.actual != d {
		x.actual = d
		writeStateID(id, d)
	}
}

// settle asks the resource whether its data moved since its last mark
// (writes the builtins did not announce, a workload's UPDATEs).
func (tr *tracker) settle(x *tracked, c *Cell, cs *cellStates) {
	if x.r.Moved != nil && x.r.Moved() {
		tr.dirty(x, c, cs)
		if x.r.Mark != nil {
			x.r.Mark()
		}
	}
}

// restore puts snapshot want back into x.
func (tr *tracker) restore(x *tracked, want, cellName string, cs *cellStates) error {
	dir := snapshotDir(x.r.ID, want)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s: state %s is needed by cell %s but its snapshot is gone (evicted or removed); rerun with -rerun-all", x.r.Name, short(want), cellName)
	}
	start := time.Now()
	if err := x.r.Load(dir); err != nil {
		x.actual = "dirty:" + nonce()
		writeStateID(x.r.ID, x.actual)
		return fmt.Errorf("%s: restoring state %s: %w", x.r.Name, short(want), err)
	}
	now := time.Now()
	os.Chtimes(dir, now, now) // recently used: evicted last
	x.actual = want
	writeStateID(x.r.ID, want)
	msg := fmt.Sprintf("%s: state %s restored from its snapshot (%s)", x.r.Name, short(want), fmtDuration(time.Since(start)))
	cs.restored = append(cs.restored, msg)
	tr.say(fmt.Sprintf("    ↺ %s, for cell %s", msg, cellName))
	return nil
}

// snapshot saves x's data as state s and evicts old snapshots over the limit.
func (tr *tracker) snapshot(x *tracked, s string) error {
	dir := snapshotDir(x.r.ID, s)
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := x.r.Save(tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("%s: snapshot of state %s: %w", x.r.Name, short(s), err)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	tr.evict(x.r.ID)
	return nil
}

// evict removes the least recently used snapshots of a resource beyond the
// limit, never one the current walk still needs.
func (tr *tracker) evict(id string) {
	dirs, _ := filepath.Glob(filepath.Join(id, "states", "*"))
	type snap struct {
		dir  string
		size int64
		used time.Time
	}
	var snaps []snap
	var total int64
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || strings.HasSuffix(d, ".tmp") {
			continue
		}
		s := snap{d, diskUsage(d), fi.ModTime()}
		snaps = append(snaps, s)
		total += s.size
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].used.Before(snaps[j].used) })
	pinned := map[string]bool{}
	for _, s := range tr.expect {
		pinned[s] = true
	}
	for s := range tr.pins {
		pinned[s] = true
	}
	for _, s := range snaps {
		if total <= tr.limit {
			return
		}
		if pinned[filepath.Base(s.dir)] {
			continue
		}
		os.RemoveAll(s.dir)
		total -= s.size
	}
}

// finish runs when a cell completes successfully: every resource it left in
// another state than it entered gets the state identity hash(entered, cell
// key) and a snapshot, recorded as the cell's "state-out".
func (tr *tracker) finish(c *Cell) ([]Input, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	cs := c.states()
	var out []Input
	for _, id := range cs.order {
		x := tr.res[id]
		if x == nil {
			continue
		}
		tr.settle(x, c, cs)
		entered := cs.entered[id]
		if x.actual == entered {
			continue
		}
		if cs.repl {
			tr.say(fmt.Sprintf("    %s changed at the prompt: cells restore their own states before they use it", x.r.Name))
			continue
		}
		// Always a fresh snapshot: it holds what this execution left.
		left := hashString("benchbook-state", entered, c.Key, cs.nonce)
		if err := tr.snapshot(x, left); err != nil {
			return nil, err
		}
		x.actual = left
		writeStateID(id, left)
		if x.r.Mark != nil {
			x.r.Mark()
		}
		out = append(out, Input{Kind: inputStateOut, Name: id, Hash: left})
	}
	return out, nil
}

// Mark is resources.mark(): the state of every resource now, for Reset. A
// resource the cell changed gets a snapshot of its current data.
func Mark(t *starlark.Thread) (map[string]string, error) {
	tr, c := stateSession(t)
	if tr == nil {
		return nil, nil
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	cs := c.states()
	cs.marks++
	m := map[string]string{}
	for id, x := range tr.res {
		if _, touched := cs.entered[id]; !touched {
			if s, ok := cs.expect[id]; ok && !cs.repl {
				m[id] = s
			}
			continue
		}
		tr.settle(x, c, cs)
		if strings.HasPrefix(x.actual, "dirty:") || strings.HasPrefix(x.actual, "outside:") {
			s := hashString("benchbook-mark", x.actual, c.Key, fmt.Sprint(cs.marks))
			if err := tr.snapshot(x, s); err != nil {
				return nil, err
			}
			x.actual = s
			writeStateID(id, s)
		}
		m[id] = x.actual
		tr.pins[x.actual] = true
	}
	cs.mark = m
	return m, nil
}

// Reset is resources.reset(mark): every resource the cell touched since the
// mark is put back in its marked state (a resource untouched is restored
// lazily, at its first touch).
func Reset(t *starlark.Thread, m map[string]string) error {
	tr, c := stateSession(t)
	if tr == nil {
		return nil
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	cs := c.states()
	for _, id := range sortedKeys(boolKeys(m)) {
		x := tr.res[id]
		if x == nil {
			continue
		}
		if _, touched := cs.entered[id]; !touched {
			continue
		}
		tr.settle(x, c, cs)
		if x.actual != m[id] {
			if err := tr.restore(x, m[id], c.Name, cs); err != nil {
				return err
			}
			if x.r.Mark != nil {
				x.r.Mark()
			}
		}
	}
	return nil
}

// StateOf is the state a memoized run of the cell would start from, for
// its key: the experiment's marked state once resources.mark() was called
// (abab and sweep reset to it before every run), else the state the
// resource is in now.
func StateOf(t *starlark.Thread, id string) string {
	tr, c := stateSession(t)
	if tr == nil {
		return ""
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	cs := c.states()
	if s, ok := cs.mark[id]; ok {
		return s
	}
	if _, touched := cs.entered[id]; touched {
		if x := tr.res[id]; x != nil {
			tr.settle(x, c, cs)
			return x.actual
		}
	}
	return cs.expect[id]
}

func boolKeys(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func (c *Cell) states() *cellStates {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st == nil {
		c.st = &cellStates{expect: map[string]string{}, entered: map[string]string{}, changes: map[string]int{}}
		c.st.repl = c.Key == ""
	}
	return c.st
}

func snapshotDir(id, state string) string { return filepath.Join(id, "states", state) }

func hasSnapshot(id, state string) bool {
	_, err := os.Stat(snapshotDir(id, state))
	return err == nil
}

func readStateID(id string) string {
	data, _ := os.ReadFile(filepath.Join(id, stateFile))
	return strings.TrimSpace(string(data))
}

func writeStateID(id, s string) {
	os.WriteFile(filepath.Join(id, stateFile), []byte(s+"\n"), 0o644)
}

func nonce() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func short(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return s[:min(8, len(s))]
}

// startWalk begins a walk of the cells in order: the expected states are
// derived again from the cells' entries.
func (tr *tracker) startWalk() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.expect, tr.pins = map[string]string{}, map[string]bool{}
}

// expectNow copies the expected states at the current point of the walk.
func (tr *tracker) expectNow() map[string]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make(map[string]string, len(tr.expect))
	for k, v := range tr.expect {
		out[k] = v
	}
	return out
}

// advance moves the walk past a cell: the resources it created or left in
// a new state now hold that state. A cell that will not run now (stale,
// never) leaves the states it might change unknown.
func (e *Engine) advance(st *State) {
	tr := e.sess.states
	switch st.Status {
	case StatusHit, StatusLive, StatusRan:
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for _, kind := range []string{inputStateNew, inputStateOut} {
			for _, in := range st.inputs {
				if in.Kind == kind {
					tr.expect[in.Name] = in.Hash
				}
			}
		}
	case StatusStale, StatusNever:
		if !e.mayTouch(st) {
			return
		}
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for id := range tr.expect {
			tr.expect[id] = ""
		}
	}
}

// mayTouch reports whether a cell could use a live resource: only a value
// of a live cell (a handle, a function) leads to one.
func (e *Engine) mayTouch(st *State) bool {
	for _, name := range st.Def.Reads {
		up := e.states[e.g.definer[name]]
		if up == nil || up.Status == StatusLive || up.entry != nil && up.entry.Live {
			return true
		}
	}
	for _, in := range st.inputs {
		if strings.HasPrefix(in.Kind, inputState) {
			return true
		}
	}
	return false
}

// staleStates checks the resource states an entry recorded: the cell must
// have run on the state the walk gives it now, and the state it left must
// still be there to restore.
func (e *Engine) staleStates(inputs []Input) string {
	tr := e.sess.states
	tr.mu.Lock()
	defer tr.mu.Unlock()
	states := false
	for _, in := range inputs {
		switch in.Kind {
		case inputState:
			states = true
			want, ok := tr.expect[in.Name]
			switch {
			case !ok:
				return fmt.Sprintf("%s is not created by any cell before it", resourceLabel(in.Name))
			case want == "":
				return fmt.Sprintf("the state of %s is unknown: an upstream cell has not run", resourceLabel(in.Name))
			case want != in.Hash:
				return fmt.Sprintf("%s is in another state here (was %s, now %s)", resourceLabel(in.Name), short(in.Hash), short(want))
			}
		case inputStateOut:
			if !hasSnapshot(in.Name, in.Hash) {
				return fmt.Sprintf("the state it left in %s is no longer kept (snapshot evicted)", resourceLabel(in.Name))
			}
		}
	}
	for _, in := range inputs {
		states = states || in.Kind == inputStateNew
	}
	for _, in := range inputs {
		if in.Kind == "resource" && !states {
			return "recorded before resource states were tracked"
		}
	}
	return ""
}

// resourceLabel names a resource by its directory: "postgres of cell cluster".
func resourceLabel(id string) string {
	owner := filepath.Base(filepath.Dir(id))
	if i := strings.LastIndexByte(owner, '-'); i > 0 {
		owner = owner[:i]
	}
	return filepath.Base(id) + " of cell " + owner
}

// enterStates gives an executing cell the states the walk expects.
func (e *Engine) enterStates(c *Cell, st *State) {
	cs := c.states()
	for k, v := range st.expectIn {
		cs.expect[k] = v
	}
	if st.Def.Options["cache"] == "false" {
		// Its effects may differ every time: what it leaves is new each run.
		cs.nonce = nonce()
	}
}

// leaveStates records the states a finished cell left (snapshots taken).
func (e *Engine) leaveStates(c *Cell) error {
	outs, err := e.sess.states.finish(c)
	if err != nil {
		return err
	}
	for _, in := range outs {
		c.mu.Lock()
		c.inputs = append(c.inputs, in)
		c.mu.Unlock()
	}
	return nil
}

// Restored lists the restores a cell's execution needed, for the record.
func (c *Cell) Restored() []string {
	if c.st == nil {
		return nil
	}
	return append([]string(nil), c.st.restored...)
}

// TouchValue touches every resource v holds (a handle, or handles in a
// dict, list or struct): a use whose writes, if any, the resource's own
// detector sees.
func TouchValue(t *starlark.Thread, v starlark.Value) error {
	for _, id := range holders(v, 0) {
		if err := Touch(t, id, false); err != nil {
			return err
		}
	}
	return nil
}

// holders lists the resources a value holds, looking two levels into
// containers (targets = {"A": pg_a, "B": pg_b}).
func holders(v starlark.Value, depth int) []string {
	if sh, ok := v.(StateHolder); ok {
		return []string{sh.StateID()}
	}
	if depth >= 2 {
		return nil
	}
	var out []string
	switch v := v.(type) {
	case *starlark.Dict:
		for _, kv := range v.Items() {
			out = append(out, holders(kv[1], depth+1)...)
		}
	case *starlark.List, starlark.Tuple:
		it := v.(starlark.Iterable).Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			out = append(out, holders(x, depth+1)...)
		}
	case starlark.HasAttrs:
		if _, ok := v.(*starlarkstruct.Struct); ok {
			for _, name := range v.AttrNames() {
				if a, err := v.Attr(name); err == nil && a != nil {
					out = append(out, holders(a, depth+1)...)
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
