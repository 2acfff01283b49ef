// Package backend is the Starlark module of the systems a notebook measures.
//
// Each kind is a package of its own (postgres, process, container, sqlite,
// mongo, and build for the top-level build): its builtin, its handle and
// the tests it passes, among them the one conformance suite every kind runs
// (backendtest.Run). What the kinds share is internal/kit; what a handle is
// (start, observe, guard, state, snapshot/restore, redaction, cleanup) is
// written down once, in builtins/internal/handle. This package only lists the
// kinds, so adding one (Redis, say) is a folder builtins/backend/redis
// exporting its handle.Kind, plus one line, "redis.Kind,", in kinds below.
// Every child process dies with benchbook.
//
// Starlark API (module backend, plus the top-level build):
//
//	backend.postgres(settings={}, dsn=None, image=None, cpus=None,
//	                 memory=None, cpuset=None, pids=None) -> postgres
//	    settings: postgresql.conf values (strings, numbers, bools); dsn
//	    attaches to an existing server instead of starting one; image runs
//	    the cluster in containers of that image (postgres/image.go); the
//	    limits hold it to CPUs and memory (internal/kit/limits.go).
//	  .dsn .version .pid
//	  .exec(sql) -> rows affected           one or many statements
//	  .query(sql, *args) -> table           $1, $2... placeholders
//	  .explain(sql, analyze=True, buffers=True) -> plan
//	      plan.text .planning_ms .execution_ms .shared_hit .shared_read .cost .rows
//	  .restart(settings={})                 merges settings, restarts
//	  .settings() -> dict                   effective values (SHOW ALL)
//	  .snapshot(name) / .restore(name)      copy of the stopped data dir
//	  .stats() -> pg_stats                  b - a is the difference:
//	      .calls .rows .plan_ms .exec_ms .shared_blks_{hit,read,dirtied,written}
//	      .wal_bytes .cpu_us_backends .cpu_us_background .database .statements
//	      .seconds .delta .warnings
//	  .logs(tail=50) -> str
//	  .stop()
//	backend.process(cmd, env={}, cwd=None, ready=None, ready_timeout="30s",
//	                cpus=None, memory=None, cpuset=None, pids=None) -> process
//	    cmd: "prog arg", a binary, or a list of strings and binaries;
//	    ready: "http://...", "tcp:PORT" or "log:REGEX".
//	  .pid .cpu() -> seconds .rss() -> kB .logs(tail=50) .restart() .stop(grace="5s")
//	backend.mongo(uri, db="", collections=[], track=True) -> mongo
//	    a MongoDB server you run; db defaults to the URI's path.
//	  .uri (password hidden) .db .version
//	  .command(doc) -> dict  .insert(collection, docs) -> n
//	  .find(collection, filter={}, sort=None, limit=0) -> [dict]
//	  .count(collection, filter={}) -> n
//	  .create_index(collection, keys, name="", unique=False) -> name
//	  .drop_index(collection, name)  .drop(collection)
//	  .stats(collection) -> dict     collStats: docs, bytes, indexes...
//	  .fingerprint(collections) -> {name: struct(docs, hash)}
//	  in observe: serverStatus deltas (mongo_cmd_*, mongo_op_*, ...)
//	backend.container(image, cmd=[], env={}, cpus=None, memory=None,
//	                  cpuset=None, pids=None, ready=None, ready_timeout="60s",
//	                  volumes={}, name=None, user=None, network="host",
//	                  restart="no") -> container
//	    through the Docker Engine API (builtins/internal/docker); cpus is a
//	    quota (0.5 = half a core), memory a size ("64MB") with swap off;
//	    image may be a static binary from build() (an image of its own),
//	    and a binary in cmd is bound in and run.
//	  .id .name .image .digest .limits .engine .pid .url
//	  .logs(tail=50) .restart() .stop() .watch(count={}, allow=[])
//	backend.sqlite(path) -> sqlite
//	  .exec(sql, *args) -> rows affected   .query(sql, *args) -> table
//	backend.demo(**options)                the embedded demo target
//	build(pkg, rev=None, repo=".", cgo=None, tags=[], ldflags="", env={}) -> binary
//	    cgo=False: CGO_ENABLED=0, a static binary an empty image runs.
//	  .path .sha256 .rev .dirty .pkg .static .interpreter .settings
//
// Durations (ready_timeout, grace) are read by starval.Duration, as in
// every builtin: "30s" or a number of seconds.
//
// Each kind's package doc says how its resources keep their state.
package backend

import (
	_ "embed"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/build"
	"github.com/benchbook/benchbook/builtins/backend/container"
	"github.com/benchbook/benchbook/builtins/backend/demo"
	"github.com/benchbook/benchbook/builtins/backend/mongo"
	"github.com/benchbook/benchbook/builtins/backend/postgres"
	"github.com/benchbook/benchbook/builtins/backend/process"
	"github.com/benchbook/benchbook/builtins/backend/sqlite"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/runtime"
)

// kinds are the backends a notebook can start, one line each.
var kinds = []handle.Kind{
	postgres.Kind,
	process.Kind,
	container.Kind,
	sqlite.Kind,
	mongo.Kind,
	build.Kind, // build(...): top level
}

// Module is the backend module: every kind, and backend.demo.
func Module() runtime.Module {
	m := handle.Module(kinds, starlark.StringDict{"demo": demo.Builtin})
	m.Docs = docs
	return m
}

// docs is the module's reference, every kind's entry and the demo's
// (benchbook help backend).
//
//go:embed reference.md
var docs string
