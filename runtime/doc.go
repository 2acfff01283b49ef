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
//     parameters it names and the modules it loads. Hashing values rather
//     than upstream keys gives early cut-off: a cell rerun that produces the
//     same values leaves its dependents cached.
//
//  4. Look up (engine.go, cache.go). Entries are content-addressed by key
//     under <cache dir>/v1/entries. Each entry lists the dynamic inputs the
//     cell met while it ran (files read, params, resources, binaries) with
//     their hashes; they are re-checked through the checkers registered with
//     RegisterInputKind, and a changed input makes the entry stale. A
//     damaged entry (checksum mismatch) is reported and recomputed.
//
//  5. Execute (exec.go). A stale cell runs on its own Thread whose locals
//     carry the Session (context, cache, cleanups) and the Cell (inputs,
//     outputs, warnings): see env.go for what builtins may ask of it. The
//     values it reads come from the cache, or from running a live cell.
//     print and the final expression become outputs. Values are frozen.
//
//  6. Store (exec.go, codec/). The moment a cell finishes, its values and
//     outputs are encoded by the codec and written atomically (temp file,
//     fsync, rename) with a checksum, so an interrupted run resumes for free;
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
//     is never stored.
//
// The REPL and watch use the same engine through interactive.go: Plan,
// RunCell, Eval and Reload.
package runtime
