// Package handle says what a backend handle is, in the interfaces it meets.
//
// A handle is the value backend.<kind>(...) returns: a live system the
// notebook measures (a PostgreSQL cluster, a process, a container, a
// MongoDB database, a SQLite file). Every kind shows some of eight faces,
// each written down here once; a kind states the faces it has with
// var _ handle.X = (*Handle)(nil) checks, and the conformance suite
// (builtins/backend/backendtest) tests every face a kind's handle has:
//
//   - start: backend.<kind>(...) starts or reaches the system and returns a
//     Handle; a bad argument is an error naming the builtin and argument.
//   - observe: an Observer gives figures per measurement window
//     (observe = [h] in a workload), per request where that makes sense.
//   - guard: a Guarded handle is watched by every measured run (package
//     guard): its death, OOM kill or restart makes the run it serves
//     invalid, and is a warning on any other run. A Logged one also has a
//     log that .watch(count = ..., allow = ...) reads.
//   - profile: a Profiled handle names its processes, which a run with
//     profile = True samples over its measured window (workload/profile.go;
//     its tests, not the conformance suite's, run it on each kind).
//   - state identity: a Stateful handle's data is a tracked resource
//     (runtime.Resource): cells record the state they ran on and left, and
//     a write, through the handle or around it, changes the identity.
//   - snapshot/restore: the Resource's Save and Load bring data back.
//   - redaction: a secret in a handle's spec (a DSN's or URI's password,
//     an env value) never reaches its String, its attributes or its errors
//     unredacted (runtime/redact learns it, or its pattern finds it).
//   - cleanup: Close stops what the handle started; the runtime calls it
//     at exit (runtime.AtExit), and a SIGKILL of benchbook still leaves no
//     child behind (builtins/internal/child, the container reaper).
//
// Unlike the values builtins return (runs, tables, comparisons: equal by
// content), a handle compares by identity: it is one live system, and two
// started alike are two systems, whose states part at the first write.
package handle

import (
	"context"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime"
)

// Handle is every kind's handle: a Starlark value with attributes (dir(h)
// lists exactly the attributes h.Attr answers), unhashable and never
// stored by the cache (a cell that defines one is live), that Close ends.
type Handle interface {
	starlark.HasAttrs
	// Close stops what the handle started and releases its connections.
	// It is safe to call twice; the handle's builtin registers it with
	// runtime.AtExit.
	Close()
}

// Stop ends a measurement window: the figures over it, given the requests
// the workload counted in it (0: no per-request figures).
type Stop = func(requests int64) (map[string]float64, error)

// Observer is a handle a workload can observe: observe = [h]. It has the
// method set of workload.Observer (loadgen.Observer as a Starlark value).
type Observer interface {
	Handle
	// StartObserving begins a window; its figures come from the server's
	// side (its counters, its processes' CPU, its cgroup).
	StartObserving(ctx context.Context) (Stop, error)
}

// Preparer is an observer whose window's opening has a slow part that can
// come before the window: a cluster's connection, a container's cgroup
// (the engine's answer), seconds on a loaded box while the requests go on. PrepareObserving does that part when the run
// starts; open then only takes the first snapshot, and cancel releases
// what was prepared when the window never opens (an interrupted warm-up).
type Preparer interface {
	PrepareObserving(ctx context.Context) (open func() (Stop, error), cancel func(), err error)
}

// Guarded is a handle the run guards watch during every measured run,
// observed or not: a process, a container, a cluster of benchbook's own.
type Guarded interface {
	Handle
	guard.Target
}

// Logged is a guarded handle with a log: .watch(count = {...},
// allow = [...]) wraps it with log rules (kit.Watched).
type Logged interface {
	Guarded
	Observer
	// WatchLog is guard.Watcher's Watch with rules for the log's lines.
	WatchLog(ctx context.Context, t0 time.Time, rules guard.LogRules) func() []guard.Trip
	// Lines follows the log from now on.
	Lines() guard.Lines
}

// Stateful is a handle whose data is a tracked resource: its state has an
// identity that cells key on, and snapshots bring a state back.
type Stateful interface {
	Handle
	runtime.StateHolder // StateID: the Resource.ID, or a name when untracked
	// Resource is what the runtime tracks of the data: its identity
	// (Initial), its snapshots (Save, Load) and its change detector
	// (Moved, Mark). Nil when the handle is not tracked (a ":memory:"
	// database, track = False, a server attached by DSN).
	Resource() *runtime.Resource
}

// Profiled is a handle whose processes a run can sample on-CPU
// (workload.*(..., profile = True)): a process and its children, a
// container's processes, a cluster's postmaster and backends, the demo.
type Profiled interface {
	starlark.Value
	// ProfileTarget names the processes to sample now; an error when
	// none runs (a stopped target, a server reached only by DSN).
	ProfileTarget() (profile.Target, error)
}

// Mongo is what workload.mongo needs of a backend.mongo handle: the URI
// to connect with (it may hold a password, and is never shown) and the
// notebook's database.
type Mongo interface {
	starlark.Value
	ConnURI() string
	Database() string
}

// Executable is a value that names a program to run: a binary from
// build(), which backend.process and backend.container take as their cmd
// (kit.Argv), so that they need not import the build kind.
type Executable interface {
	starlark.Value
	Path() string // the program's file
}

// Statement is one statement's counters over a measurement window, as a
// server that counts per statement (pg_stat_statements) gives them: what a
// run needs to give each of its tags the figures of the statements it ran.
type Statement struct {
	Query      string  // as the server keeps it (constants as $n)
	Calls      int64   // executions that completed
	PlanExecMS float64 // planning + execution time
	SharedHit  int64   // shared blocks hit
	SharedRead int64   // shared blocks read
}

type statementsKey struct{}

// WithStatements is ctx carrying sink: an observer that counts per
// statement gives it, as its window closes, every statement's counters
// over the window. A run opens its observers' windows under its context,
// so this is how it learns them without another interface.
func WithStatements(ctx context.Context, sink func([]Statement)) context.Context {
	return context.WithValue(ctx, statementsKey{}, sink)
}

// Statements is the sink ctx carries, nil for none.
func Statements(ctx context.Context) func([]Statement) {
	f, _ := ctx.Value(statementsKey{}).(func([]Statement))
	return f
}
