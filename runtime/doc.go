// Package runtime is benchbook's notebook engine. A notebook is a Starlark
// file in the Jupytext percent format; the engine turns it into a cached,
// reproducible computation in these steps:
//
//  1. Parse (notebook.go). The file is split at "# %%" lines into cells:
//     "# %% NAME key=value" names a code cell and sets options (cache=false),
//     "# %% [markdown]" holds Markdown in comment lines. Each code cell is
//     parsed on its own, padded with empty lines, so every position the
//     user sees is the notebook file's own line:col.
//
//  2. Analyse (analyse.go, graph.go). go.starlark.net's resolver gives each
//     cell the globals it reads and defines. A global belongs to exactly one
//     cell; "_name" and top-level loop variables stay cell-local. Reads are
//     linked to their defining cells, forming a DAG; cells execute in
//     dependency order, file order among independent cells. Duplicate
//     definitions, undefined names and cycles are errors naming the cells.
//
//  3. Key (key.go). A cell's key hashes the format version, its source with
//     comments and blank lines removed, the hash of every value it reads
//     (or, for a live value, the key of the cell that makes it), the
//     parameters it names and the modules it loads (each with the modules
//     it loads in turn). Hashing values rather
//     than upstream keys gives early cut-off: a cell rerun that produces the
//     same values leaves its dependents cached. A miss is explained by the
//     parts that moved since the last run; a live cell's values, keyed by
//     their cell, are compared by content identities (why.go), so the
//     reason names only the values that changed.
//
//  4. Look up (engine.go, cache.go). Entries are content-addressed by key
//     under <cache dir>/v1/entries. Each entry lists the dynamic inputs the
//     cell met while it ran (files read, params, resources, binaries) with
//     their hashes; they are re-checked through the checkers of the
//     engine's modules (Module.Inputs), and a changed input makes the entry
//     stale. What a loaded module's top level met (param, file) is an input
//     of every cell that loads it (load.go). A damaged entry (checksum
//     mismatch, or values that do not hash to the hashes downstream keys
//     chain) is reported and recomputed.
//
//  5. Execute (exec.go). A stale cell runs on its own Thread whose locals
//     carry the Session (context, cache, cleanups) and the Cell (inputs,
//     outputs, warnings): see env.go for what builtins may ask of it.
//     State a builtin keeps for the whole run (the PIDs host.observe named,
//     the clusters a REPL started) lives on the Session (SessionValue), not
//     in package globals. The values a cell reads come from the cache, or
//     from running a live cell.
//     print and the final expression become outputs. Values are frozen.
//
//  6. Store (exec.go, codec/). The moment a cell finishes, its values and
//     outputs are encoded by the codec (a host value read back by its
//     module's decoder, Module.Decoders) and written atomically (temp file,
//     rename) with a checksum, so an interrupted run resumes for free (and
//     an entry a power cut left short is found damaged and recomputed);
//     memo(key, fn) does the same for sub-results inside a cell. A cell
//     whose values cannot be stored (a function, a backend handle) is live:
//     its outputs are kept, and it re-executes only when a stale dependent
//     needs its values.
//
//  7. Render (report.go, record/). The engine assembles a record.Record:
//     cells with status (hit, ran, live, error, skipped, never), reason,
//     timing, host and outputs, plus provenance; the record package writes
//     it as self-contained HTML, Markdown or JSON. Secrets (passwords in
//     URLs and DSNs, fields named like token) pass through runtime/redact
//     on their way to a record, stderr or the cache; a value holding one
//     is never stored. The engine tells the redactor which values are
//     secrets (secrets.go): from the source before anything runs, from
//     the variables in scope before each output, from a cell's values and
//     outputs once it ends; entries stored before a later cell revealed a
//     secret are stored again masked, and a cell's listing is kept masked
//     (listing.go) for a record rendered from the cache alone.
//
// The REPL and watch use the same engine through interactive.go: Plan,
// RunCell, Eval, Definer and Dependents (the cell graph), and Reload, which
// returns an Edit (cells edited, added, removed, changed) so no caller
// diffs notebooks itself. A cell's Status is record.Status: one list of
// statuses for the engine, the records and the CLI.
//
// Around the pipeline: builtins (builtins/...) reach the run only through
// env.go, keeping per-run state with SessionValue. The rooms:
//
//   - runtime/codec, runtime/record, runtime/redact, runtime/hostinfo: the
//     engine's own packages (values to and from the cache; HTML, Markdown
//     and JSON records; the one redaction pass; the machine). Builtins use
//     them too, so they are not internal.
//   - runtime/limits: the bounds on untrusted inputs (files that are not
//     regular, file and record sizes, value depth and size), each raised
//     by an environment variable; runtime/nbfuzz fuzzes whole notebooks.
//   - runtime/resstate: live resources' states, without Starlark (below).
//   - runtime/bytesize: sizes read and written one way (Docker's binary
//     units), a leaf: limits, resstate and the builtins' memory limits and
//     host guard all use it.
//   - runtime/starjson: Starlark values to JSON, one rule (a big int stays
//     an exact number, NaN is null), for the JSON record, export.json and
//     a run's figures.
//   - runtime/stats: the statistics of compare() as a pure library, no
//     Starlark (two arms' estimate, interval and test; medians; the shown
//     index), a leaf: metric, plot, workload, cmd/benchbook and bench/ use
//     it, so it lives here rather than under one module.
//   - runtime/filehash: a file's SHA-256, a leaf: the engine keys file
//     inputs with it, and package fleet checks the binary it copies to a
//     remote agent with it without linking the engine.
//   - runtime/procfs: the one reader of /proc (a process's stat, its
//     clock tick, process trees, threads, arguments, environment, sockets;
//     the machine's CPU times, load and TCP sockets), a leaf the engine,
//     the builtins, the agent and bench/ share.
//   - runtime/refdoc: the reference of a module (its Markdown, or a
//     Starlark module's docstrings) as entries by builtin: signature, text,
//     examples.
//   - runtime/jupyter: the Jupyter messaging protocol and kernel loop,
//     behind a Handler that knows the notebook (cmd/benchbook's kernel
//     drives this engine through it, as the REPL does); runtime/ipynb:
//     percent format <-> nbformat 4, on SplitCells. The engine tells the
//     kernel of each cell through Options.OnCell instead of progress lines.
//   - runtime/testsupport: startest runs every package's testdata/*.star
//     tests in a Session with the modules a test names, golden compares
//     golden files, pgtest starts a throwaway PostgreSQL for a test (and
//     keeps a notebook's first cluster as a pristine copy that other caches
//     are seeded with), needs stops a test for a missing tool (a skip
//     locally, a failure under CI), timing marks a test that must run
//     without -race (.ci/test's timing step). None imports a builtin: a
//     test that wants modules lists them.
//   - builtins/backend: the backend module, a package per kind (postgres,
//     process, container, mongo, sqlite, and build); builtins/internal/handle
//     says in one file what a handle is (start, observe, guard, state,
//     snapshot/restore, redaction, cleanup), internal/kit holds what the
//     kinds share, backendtest is the conformance suite every kind passes,
//     statetest tests live state through the engine against real
//     PostgreSQL, SQLite and FerretDB.
//   - builtins/hidden: the one table of the binary's hidden modes (the
//     supervisor of its children, the container reaper, the demo target:
//     benchbook re-executed by itself), which main and the TestMain of
//     every test binary that starts such a helper run first.
//   - builtins/internal: what only builtins share: starval (reading
//     values), child (the one way a child process starts, and the
//     supervisor), guard (run guards), starbson (Starlark <-> BSON and
//     canonical documents), docker (containers through the Docker Engine
//     API, and their reaper), cgroup (limits and per-window figures of a
//     group of processes, v1 and v2), metricname (what a metric's name
//     says: its direction, its percentile). builtins/workload/mongotest starts
//     FerretDB for tests, built from its own nested module.
//
// # Modules (module.go)
//
// The engine knows no builtin module. A module is a value, Module: the
// globals it predeclares, the decoders of the host values its builtins
// store, the checkers of the inputs they record, the value types the
// record keeps (Record.Named) and a record pass. The host hands the
// engine its modules and its stdlib in Options (Modules, Stdlib: the FS
// "@std/NAME" loads from); Open merges them, after the engine's own Core
// module (param, file, memo, progress, resources, struct, json, math),
// into the engine's ModuleSet, refusing two modules that give one name,
// and its Session carries it, so two engines of one process see only
// their own. cmd/benchbook/modules.go lists benchbook's modules by hand,
// in one place, as k6's jsmodules.go does and go.starlark.net's
// cmd/starlark predeclares its own; each builtins/* package exports its
// Module (a function: no init() registers anything), and a test builds
// its engine or session (startest.Options.Modules) with the modules it
// needs. A module carries its reference (Module.Docs: the package's
// embedded reference.md, Core's is reference.md here), which runtime/refdoc
// reads for benchbook help, the REPL's :help, the kernel's inspect and the
// generated pages of docs/reference; the stdlib's reference is its
// modules' docstrings.
//
// # Live resources (resstate/, state.go, resources.go, fingerprint.go)
//
// A live resource (a PostgreSQL cluster of the notebook's own, a SQLite
// file, the notebook's database on a MongoDB server) holds data
// that cells change, so its state is a value of the notebook like any other,
// named by an identity:
//
//   - Created: the creating cell registers the resource (RegisterResource)
//     in state Initial, a hash of its spec (binaries, settings), recorded as
//     its "state-new" input; a fresh resource is snapshotted in that state.
//   - Used: every cell that reads a handle, or whose builtins touch one
//     (Touch), runs on the state the notebook order gives it at that point:
//     the engine walks the cells in order keeping each resource's expected
//     state (resstate.Tracker), and before a cell first uses a resource that
//     holds anything else (leftovers of a later cell, of an earlier run, of
//     another -p) restores the expected state from its snapshot. That state
//     is the cell's "state" input: on lookup an entry is a hit only if the
//     walk gives the cell the state it ran on.
//   - Changed: a cell that leaves the resource in another state than it
//     entered (a builtin said it writes, or the resource's detector saw a
//     write: PostgreSQL's WAL moving by more than housekeeping records) gets
//     the identity hash(entered, cell key) for what it left, snapshotted
//     before its entry is written, and recorded as its "state-out" input. A
//     cached changing cell is a hit only while that snapshot exists (they
//     are evicted least recently used past BENCHBOOK_STATE_LIMIT (a size) per
//     resource, 8 GiB by default; never one the current walk needs), so
//     -p rows=A -> B -> A finds A's data again without refilling it. A
//     cache=false cell leaves a new identity every time it runs.
//   - Experiments: resources.mark() and resources.reset(mark) bring every
//     resource a cell touched back to a marked state; abab and sweep reset
//     before every run and at the end, soak before its first window. memo
//     checkpoints are keyed by a fingerprint of what fn computes (its text,
//     free variables, the globals it names, a live value by its cell's key
//     and inputs, resources with the state the run starts from) and of what
//     the cell met before the call (the live values it reads, its inputs
//     but parameters), not by the cell's key, so pairs = 3 -> 4 or a grown
//     sweep grid reuse the runs already measured, and a target whose
//     binary changed is measured again.
//   - Outside changes are out of scope except the cheap cases: a data dir
//     whose last checkpoint moved while benchbook was not running, or that
//     was not shut down cleanly, is put in an "outside" state that no entry
//     knows (cells restore theirs); a SQLite file found otherwise than
//     benchbook left it is the user's new first state, an input of the cell
//     that opens it. A
//     change typed at the REPL prompt leaves the resource in a state no cell
//     recorded: the next cell that uses it restores its own state first.
//
// Package resstate holds the tracker (states, snapshots, restores,
// eviction) without Starlark; state.go maps a thread to its tracker and
// cell and turns the tracker's effects into cache inputs.
package runtime
