// Package resstate tracks the states of live resources, their snapshots and
// their eviction. The state of a resource (a PostgreSQL cluster, a SQLite
// file, a database server) is a value of the notebook: it tracks which state
// each resource's data is in now, which state the notebook order gives each
// cell, the snapshots that put a resource back into a state, and their
// eviction. See "Live resources" in runtime's doc.go.
//
// The package holds no Starlark: the engine (package runtime) maps a
// Starlark thread to its Tracker and Cell, records the effects this
// package returns as cache inputs, and walks the cells.
package resstate

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/runtime/bytesize"
	"github.com/benchbook/benchbook/runtime/limits"
)

// Input kinds the engine writes for resources; each names the resource's ID.
const (
	KindState    = "state"     // the state the cell ran on (checked on lookup)
	KindStateOut = "state-out" // the state the cell left, when it changed it
	KindStateNew = "state-new" // the cell created the resource in this state
)

// Effect is a resource state a cell's cache entry records: one of the
// kinds above, the resource's ID and the state.
type Effect struct{ Kind, ID, State string }

// Resource is a live system whose data is part of the notebook's state. A
// builtin registers it when a cell creates or reuses it and touches it
// before every use.
type Resource struct {
	ID      string // absolute directory of the resource; its snapshots live in ID/states
	Name    string // for messages: "postgres of cell cluster"
	Initial string // the state identity of its data when created (a hash of its spec)
	Created bool   // its data was created just now: it is in state Initial
	Outside bool   // its data was changed outside benchbook since benchbook last saw it
	// Shared: others write it too (a server the user runs, reached also
	// by URI): data that moved between two cells' uses is an outside change,
	// not the state the last cell left.
	Shared bool

	// Save copies the data into dir (a snapshot). base, when not "", is
	// the snapshot of the state the data was in when the cell entered it:
	// the data derives from it, and dir may share its unchanged files
	// (snapshots are only ever read).
	Save func(dir, base string) error
	Load func(dir string) error // put the data of snapshot dir back
	// Moved reports whether the data may have changed since the last Mark
	// (PostgreSQL: the WAL insert position moved); Mark sets that point.
	Moved func() bool
	Mark  func()
	// Holds reports whether the data is already what snapshot dir holds
	// (PostgreSQL: nothing but housekeeping in its WAL since that
	// snapshot's checkpoint), so that a restore of it can be skipped; nil
	// when the resource cannot tell.
	Holds func(dir string) bool
}

// DefaultLimit bounds the bytes of state snapshots kept per resource; the
// least recently used go first. BENCHBOOK_STATE_LIMIT (a size: "20GB",
// "500MB", bytes) overrides it.
const DefaultLimit = 8 << 30

// stateFile holds the identity of the state the resource's data is in now.
const stateFile = "state-id"

// Tracker is a session's view of its resources: what each one holds now
// and, as the engine walks the cells in order, what each should hold.
type Tracker struct {
	mu     sync.Mutex
	res    map[string]*tracked
	expect map[string]string // resource ID -> state at the current point of the walk ("" unknown)
	until  map[string]string // resource ID -> the stale cell that made its state unknown
	pins   map[string]bool   // states the running cell entered or marked: never evicted
	say    func(string)      // a progress line
	dur    func(time.Duration) string
	limit  int64
}

type tracked struct {
	r      *Resource
	actual string // the state its data is in; "dirty:..." when unknown to any entry
}

// New returns a tracker that reports restores through say, with
// durations formatted by dur.
func New(say func(string), dur func(time.Duration) string) *Tracker {
	limit := int64(DefaultLimit)
	if v := os.Getenv("BENCHBOOK_STATE_LIMIT"); v != "" {
		if n, err := bytesize.Parse(v); err == nil && n > 0 {
			limit = n
		} else {
			say(fmt.Sprintf("warning: BENCHBOOK_STATE_LIMIT=%q: %v; keeping %s", v, err, bytesize.Format(limit)))
		}
	}
	return &Tracker{res: map[string]*tracked{}, expect: map[string]string{}, until: map[string]string{}, pins: map[string]bool{}, say: say, dur: dur, limit: limit}
}

// Cell is what one executing cell did to resources.
type Cell struct {
	name, key string
	expect    map[string]string // the states the notebook order gives this cell
	entered   map[string]string // first touch: the state the cell ran on
	mark      map[string]string // resources.mark(): the experiment's start state
	restored  []string          // "postgres of cell cluster: state ab12 restored ..."
	restores  map[string]int    // restores per resource name
	restoreT  time.Duration     // time they took
	changes   map[string]int    // change operations per resource
	order     []string          // touched resources, in order
	marks     int               // resources.mark() calls so far
	repl      bool              // a REPL input (no key): no walk, no restore
	nonce     string            // cache=false: every execution leaves a new state
}

// NewCell starts the record of an execution of cell name with cache key
// key ("" for a REPL input).
func NewCell(name, key string) *Cell {
	return &Cell{name: name, key: key, repl: key == "",
		expect: map[string]string{}, entered: map[string]string{}, changes: map[string]int{}}
}

// Enter gives the cell the states the walk expects; fresh (cache=false)
// makes what it leaves new on every execution.
func (cs *Cell) Enter(expect map[string]string, fresh bool) {
	for k, v := range expect {
		cs.expect[k] = v
	}
	if fresh {
		cs.nonce = nonce()
	}
}

// Restored lists the restores the cell's execution needed, for the record.
func (cs *Cell) Restored() []string {
	if cs == nil {
		return nil
	}
	return append([]string(nil), cs.restored...)
}

// RestoreSummary is the restores in a phrase for the cell's reason: the
// one restore's message, or how many of each resource and their time (each
// had its own progress line when it happened); "" for none.
func (cs *Cell) RestoreSummary() string {
	if cs == nil || len(cs.restored) == 0 {
		return ""
	}
	if len(cs.restored) == 1 {
		return cs.restored[0]
	}
	names := make([]string, 0, len(cs.restores))
	for n := range cs.restores {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d restores of %s from its snapshots", cs.restores[n], n)
		if cs.restores[n] == 1 {
			parts[i] = "1 restore of " + n + " from its snapshot"
		}
	}
	return fmt.Sprintf("%s (%s in all)", strings.Join(parts, ", "), fmtTotal(cs.restoreT))
}

// fmtTotal rounds a total time for a phrase.
func fmtTotal(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// Register makes a resource known to the session. The cell records that
// it created the resource in state r.Initial (a KindStateNew effect).
func (tr *Tracker) Register(cs *Cell, r *Resource) error {
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
	if _, ok := cs.expect[r.ID]; !ok && !cs.repl {
		cs.expect[r.ID] = r.Initial
	}
	if x.actual == r.Initial && !HasSnapshot(r.ID, r.Initial) {
		// The state every cell of this resource starts from: keep it.
		return tr.snapshot(x, r.Initial, "")
	}
	return nil
}

// Touch is called before the cell uses resource id (change false) or
// changes it (change true). On the cell's first touch the resource is put
// in the state the notebook order gives the cell (restored from a snapshot
// if it holds anything else); first is then true and entered is that
// state, the cell's input. An unknown id is no resource of the session.
func (tr *Tracker) Touch(cs *Cell, id string, change bool) (entered string, first bool, err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	x := tr.res[id]
	if x == nil {
		return "", false, nil
	}
	if _, ok := cs.entered[id]; !ok {
		if err := tr.enter(x, cs); err != nil {
			return "", false, err
		}
		entered, first = cs.entered[id], true
	}
	if change {
		tr.dirty(x, cs)
	}
	return entered, first, nil
}

// enter brings x into the state the cell should see and records it.
func (tr *Tracker) enter(x *tracked, cs *Cell) error {
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
	if x.r.Shared && x.r.Moved != nil && x.r.Moved() {
		tr.say(fmt.Sprintf("%s: its data changed outside benchbook since a cell last used it; the cell gets its state back", x.r.Name))
		x.actual = "outside:" + nonce()
		writeStateID(id, x.actual)
	}
	if x.actual != want {
		if err := tr.restore(x, want, cs); err != nil {
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
func (tr *Tracker) dirty(x *tracked, cs *Cell) {
	id := x.r.ID
	cs.changes[id]++
	d := "dirty:" + HashString(cs.entered[id], cs.key, cs.nonce, fmt.Sprint(cs.marks, cs.changes[id]))[:16]
	if cs.key == "" {
		d = "dirty:" + nonce()
	}
	if x.actual != d {
		x.actual = d
		writeStateID(id, d)
	}
}

// settle asks the resource whether its data moved since its last mark
// (writes the builtins did not announce, a workload's UPDATEs).
func (tr *Tracker) settle(x *tracked, cs *Cell) {
	if x.r.Moved != nil && x.r.Moved() {
		tr.dirty(x, cs)
		if x.r.Mark != nil {
			x.r.Mark()
		}
	}
}

// restore puts snapshot want back into x.
func (tr *Tracker) restore(x *tracked, want string, cs *Cell) error {
	dir := snapshotDir(x.r.ID, want)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s: state %s is needed by cell %s but its snapshot is gone (evicted or removed); rerun with -rerun-all", x.r.Name, Short(want), cs.name)
	}
	if x.r.Holds != nil && x.r.Holds(dir) {
		// Another identity over the same data (a cell that announced a
		// change and made none, an outside change that was not one).
		x.actual = want
		writeStateID(x.r.ID, want)
		tr.say(fmt.Sprintf("    = %s already holds state %s: not restored, for cell %s", x.r.Name, Short(want), cs.name))
		return nil
	}
	start := time.Now()
	// Until Load returns, the data is in no state an entry knows: a run
	// killed mid-restore must not find the old state's name on new data
	// (or the reverse) when it starts again.
	x.actual = "dirty:restoring-" + nonce()
	writeStateID(x.r.ID, x.actual)
	if err := x.r.Load(dir); err != nil {
		x.actual = "dirty:" + nonce()
		writeStateID(x.r.ID, x.actual)
		return fmt.Errorf("%s: restoring state %s: %w", x.r.Name, Short(want), err)
	}
	now := time.Now()
	os.Chtimes(dir, now, now) // recently used: evicted last
	x.actual = want
	writeStateID(x.r.ID, want)
	took := time.Since(start)
	msg := fmt.Sprintf("%s: state %s restored from its snapshot (%s)", x.r.Name, Short(want), tr.dur(took))
	cs.restored = append(cs.restored, msg)
	if cs.restores == nil {
		cs.restores = map[string]int{}
	}
	cs.restores[x.r.Name]++
	cs.restoreT += took
	tr.say(fmt.Sprintf("    ↺ %s, for cell %s", msg, cs.name))
	return nil
}

// snapshot saves x's data as state s, sharing what it can with the
// snapshot of state base ("": none), and evicts old snapshots over the
// limit.
func (tr *Tracker) snapshot(x *tracked, s, base string) error {
	dir := snapshotDir(x.r.ID, s)
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	baseDir := ""
	if base != "" && HasSnapshot(x.r.ID, base) {
		baseDir = snapshotDir(x.r.ID, base)
	}
	if err := x.r.Save(tmp, baseDir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("%s: snapshot of state %s: %w", x.r.Name, Short(s), err)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	tr.evict(x.r.ID)
	return nil
}

// evict removes the least recently used snapshots of a resource beyond the
// limit, never one the current walk still needs. Snapshots share files
// (hard links to an older snapshot's unchanged ones): a file counts once,
// and removing a snapshot frees only the files no kept one also names.
func (tr *Tracker) evict(id string) {
	dirs, _ := filepath.Glob(filepath.Join(id, "states", "*"))
	type snap struct {
		dir   string
		used  time.Time
		files []string // fileKey of each of its regular files
	}
	type file struct {
		size  int64
		names int // among the snapshots kept
	}
	files := map[string]*file{}
	var snaps []snap
	var total int64
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || strings.HasSuffix(d, ".tmp") {
			continue
		}
		s := snap{dir: d, used: fi.ModTime()}
		filepath.Walk(d, func(path string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			k := fileKey(path, info)
			f := files[k]
			if f == nil {
				f = &file{size: info.Size()}
				files[k] = f
				total += f.size
			}
			f.names++
			s.files = append(s.files, k)
			return nil
		})
		snaps = append(snaps, s)
	}
	if total <= tr.limit {
		return
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
		for _, k := range s.files {
			f := files[k]
			f.names--
			if f.names == 0 {
				total -= f.size
			}
		}
	}
}

// Finish runs when a cell completes successfully: every resource it left
// in another state than it entered gets the state identity hash(entered,
// cell key) and a snapshot, returned as a KindStateOut effect.
func (tr *Tracker) Finish(cs *Cell) ([]Effect, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []Effect
	for _, id := range cs.order {
		x := tr.res[id]
		if x == nil {
			continue
		}
		tr.settle(x, cs)
		entered := cs.entered[id]
		if x.actual == entered {
			continue
		}
		if cs.repl {
			tr.say(fmt.Sprintf("    %s changed at the prompt: cells restore their own states before they use it", x.r.Name))
			continue
		}
		// Always a fresh snapshot: it holds what this execution left.
		left := HashString("benchbook-state", entered, cs.key, cs.nonce)
		if err := tr.snapshot(x, left, entered); err != nil {
			return nil, err
		}
		x.actual = left
		writeStateID(id, left)
		if x.r.Mark != nil {
			x.r.Mark()
		}
		out = append(out, Effect{Kind: KindStateOut, ID: id, State: left})
	}
	return out, nil
}

// Mark is resources.mark(): the state of every resource now, for Reset. A
// resource the cell changed gets a snapshot of its current data.
func (tr *Tracker) Mark(cs *Cell) (map[string]string, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	cs.marks++
	m := map[string]string{}
	for id, x := range tr.res {
		if _, touched := cs.entered[id]; !touched {
			if s, ok := cs.expect[id]; ok && !cs.repl {
				m[id] = s
			}
			continue
		}
		tr.settle(x, cs)
		if strings.HasPrefix(x.actual, "dirty:") || strings.HasPrefix(x.actual, "outside:") {
			s := HashString("benchbook-mark", x.actual, cs.key, fmt.Sprint(cs.marks))
			if err := tr.snapshot(x, s, cs.entered[id]); err != nil {
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

// Reset is resources.reset(mark): every resource the cell touched since
// the mark is put back in its marked state (a resource untouched is
// restored lazily, at its first touch).
func (tr *Tracker) Reset(cs *Cell, m map[string]string) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		x := tr.res[id]
		if x == nil {
			continue
		}
		if _, touched := cs.entered[id]; !touched {
			continue
		}
		tr.settle(x, cs)
		if x.actual != m[id] {
			if err := tr.restore(x, m[id], cs); err != nil {
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
func (tr *Tracker) StateOf(cs *Cell, id string) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if s, ok := cs.mark[id]; ok {
		return s
	}
	if _, touched := cs.entered[id]; touched {
		if x := tr.res[id]; x != nil {
			tr.settle(x, cs)
			return x.actual
		}
	}
	return cs.expect[id]
}

// StartWalk begins a walk of the cells in order: the expected states are
// derived again from the cells' entries.
func (tr *Tracker) StartWalk() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.expect, tr.pins, tr.until = map[string]string{}, map[string]bool{}, map[string]string{}
}

// ExpectNow copies the expected states at the current point of the walk.
func (tr *Tracker) ExpectNow() map[string]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make(map[string]string, len(tr.expect))
	for k, v := range tr.expect {
		out[k] = v
	}
	return out
}

// Advance moves the walk past a cell that ran or was a hit: the resources
// it created or left in a new state now hold that state.
func (tr *Tracker) Advance(effects []Effect) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, kind := range []string{KindStateNew, KindStateOut} {
		for _, e := range effects {
			if e.Kind == kind {
				tr.expect[e.ID] = e.State
				delete(tr.until, e.ID)
			}
		}
	}
}

// Unknown moves the walk past cell, which may change resources but does
// not run now: every resource's state is unknown after it, until it runs.
func (tr *Tracker) Unknown(cell string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for id := range tr.expect {
		tr.expect[id] = ""
		if tr.until[id] == "" {
			tr.until[id] = cell
		}
	}
}

// Until names the cell whose run decides the states an entry recorded,
// when the walk does not know them yet (see Unknown): "" when it does.
func (tr *Tracker) Until(effects []Effect) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, e := range effects {
		if want, ok := tr.expect[e.ID]; e.Kind == KindState && ok && want == "" {
			return tr.until[e.ID]
		}
	}
	return ""
}

// Stale checks the resource states an entry recorded: the cell must have
// run on the state the walk gives it now, and the state it left must
// still be there to restore. It returns why the entry is stale, or "".
// legacy says the entry used a resource before states were tracked.
func (tr *Tracker) Stale(effects []Effect, legacy bool) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	states := false
	for _, e := range effects {
		switch e.Kind {
		case KindState:
			states = true
			want, ok := tr.expect[e.ID]
			switch {
			case !ok:
				return fmt.Sprintf("%s is not created by any cell before it", Label(e.ID))
			case want == "":
				return fmt.Sprintf("the state of %s is unknown until cell %s runs (a hit if it leaves the state this entry ran on)", Label(e.ID), tr.until[e.ID])
			case want != e.State:
				return fmt.Sprintf("%s is in another state here (was %s, now %s)", Label(e.ID), Short(e.State), Short(want))
			}
		case KindStateOut:
			if !HasSnapshot(e.ID, e.State) {
				return fmt.Sprintf("the state it left in %s is no longer kept (snapshot evicted)", Label(e.ID))
			}
		case KindStateNew:
			states = true
		}
	}
	if legacy && !states {
		return "recorded before resource states were tracked"
	}
	return ""
}

// Label names a resource by its directory: "postgres of cell cluster".
func Label(id string) string {
	owner := filepath.Base(filepath.Dir(id))
	if i := strings.LastIndexByte(owner, '-'); i > 0 {
		owner = owner[:i]
	}
	return filepath.Base(id) + " of cell " + owner
}

func snapshotDir(id, state string) string { return filepath.Join(id, "states", state) }

// HasSnapshot reports whether resource id keeps a snapshot of state.
func HasSnapshot(id, state string) bool {
	_, err := os.Stat(snapshotDir(id, state))
	return err == nil
}

// Unsettled reports whether resource id's data was, when its state was
// last recorded, in no state an entry knows: a cell was changing it or a
// restore putting it back (a run killed then leaves it so). Its kind may
// take what it finds then for benchbook's own doing, not an outside change.
func Unsettled(id string) bool { return strings.HasPrefix(readStateID(id), "dirty:") }

func readStateID(id string) string {
	data, _ := limits.ReadFile(filepath.Join(id, stateFile), limits.File)
	return strings.TrimSpace(string(data))
}

// writeStateID replaces the state-id file with a new one renamed over it:
// a FIFO put there is replaced, not opened (an open for writing would wait
// for a reader).
func writeStateID(id, s string) {
	f, err := os.CreateTemp(id, "."+stateFile+".*")
	if err != nil {
		return
	}
	_, err = f.WriteString(s + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(id, stateFile))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

func nonce() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Short abbreviates a state identity for messages.
func Short(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return s[:min(8, len(s))]
}

// HashString is the engine's one hash of a list of strings: SHA-256 over
// each part prefixed by its length, in hex (cache keys and state
// identities alike).
func HashString(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// UniqueUsage is the bytes of the regular files under paths, each file
// (inode) counted once however many names it has there.
func UniqueUsage(paths ...string) int64 {
	seen := map[string]bool{}
	var total int64
	for _, p := range paths {
		filepath.Walk(p, func(path string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			if k := fileKey(path, info); !seen[k] {
				seen[k] = true
				total += info.Size()
			}
			return nil
		})
	}
	return total
}

// fileKey names the file behind a name: its device and inode, so that
// hard links share one key (the path where the system gives no inode).
func fileKey(path string, info os.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return path
}
