// Package backend gives notebooks the systems they measure: PostgreSQL
// clusters of their own, target processes, SQLite files and Go binaries built
// at a git revision. Every child process dies with benchbook.
//
// Starlark API (module backend, plus the top-level build):
//
//	backend.postgres(settings={}, dsn=None, image=None, cpus=None,
//	                 memory=None, cpuset=None, pids=None) -> postgres
//	    settings: postgresql.conf values (strings, numbers, bools); dsn
//	    attaches to an existing server instead of starting one; image runs
//	    the cluster in containers of that image (pgimage.go); the limits
//	    hold it to CPUs and memory (limits.go).
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
//	    quota (0.5 = half a core), memory a size ("64MB") with swap off.
//	  .id .name .image .digest .limits .engine .pid .url
//	  .logs(tail=50) .restart() .stop() .watch(count={}, allow=[])
//	backend.sqlite(path) -> sqlite
//	  .exec(sql, *args) -> rows affected   .query(sql, *args) -> table
//	backend.demo(**options)                the embedded demo target
//	build(pkg, rev=None, repo=".") -> binary
//	  .path .sha256 .rev .dirty .pkg
//
// Durations (ready_timeout, grace) are read by starval.Duration, as in
// every builtin: "30s" or a number of seconds.
//
// Resources keep their state: a cluster's data lives in the creating cell's
// resource dir, and a later run starts the server on it again. The cluster
// is a tracked resource (runtime/state.go, pgstate.go): cells that use it
// record the state they ran on, cells that change it the state they left,
// snapshotted under the resource dir, and the engine restores the state a
// cell needs before it runs. The creating cell records a "resource" input
// (the id written at initdb), so it goes stale when the data dir is created
// afresh. .snapshot(name) / .restore(name) remain for a notebook's own use.
// A SQLite file is tracked the same way (sqlitestate.go), and so is the
// notebook's database on a MongoDB server, by dump and reload (mongostate.go).
//
// As root, PostgreSQL runs as the "postgres" user; the resource dir's
// ancestors get o+x (traverse only) where they lack it. Clusters trust
// connections on 127.0.0.1 and their private socket: DSNs carry no password.
// Settings are PostgreSQL's defaults except what observation needs
// (pg_stat_statements preloaded with track_planning, track_io_timing).
package backend

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/demo"
	"github.com/benchbook/benchbook/runtime"
)

// Module is the backend module.
var Module = &starlarkstruct.Module{
	Name: "backend",
	Members: starlark.StringDict{
		"postgres":  starlark.NewBuiltin("backend.postgres", postgresBuiltin),
		"process":   starlark.NewBuiltin("backend.process", processBuiltin),
		"container": starlark.NewBuiltin("backend.container", containerBuiltin),
		"sqlite":    starlark.NewBuiltin("backend.sqlite", sqliteBuiltin),
		"mongo":     starlark.NewBuiltin("backend.mongo", mongoBuiltin),
		"demo":      demo.Builtin,
	},
}

func init() {
	runtime.Predeclare("backend", Module)
	runtime.Predeclare("build", Build)
	runtime.RegisterInputKind("resource", readGeneration)
}
