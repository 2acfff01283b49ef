// Package postgres gives a notebook a PostgreSQL server: backend.postgres().
//
// The server is a throwaway cluster of the notebook's own (initdb under the
// cache dir, a free port, pg_stat_statements on), on the host or in
// containers of an image (image.go), or an existing server reached by DSN.
// It is observed per window (observe.go: pg_stat_statements, WAL, /proc CPU
// of its backends), guarded through every run (guard.go), and its data dir
// is a tracked resource (state.go).
//
// Resources keep their state: a cluster's data lives in the creating cell's
// resource dir, and a later run starts the server on it again. The cluster
// is a tracked resource (runtime/state.go, state.go): cells that use it
// record the state they ran on, cells that change it the state they left,
// snapshotted under the resource dir, and the engine restores the state a
// cell needs before it runs. The creating cell records a "resource" input
// (the id written at initdb), so it goes stale when the data dir is created
// afresh. .snapshot(name) / .restore(name) remain for a notebook's own use.
// A SQLite file is tracked the same way (package sqlite), and so is the
// notebook's database on a MongoDB server, by dump and reload (package
// mongo).
//
// As root, PostgreSQL runs as the "postgres" user; the resource dir's
// ancestors get o+x (traverse only) where they lack it. Clusters trust
// connections on 127.0.0.1 and their private socket: DSNs carry no password.
// Settings are PostgreSQL's defaults except what observation needs
// (pg_stat_statements preloaded with track_planning, track_io_timing).
package postgres
