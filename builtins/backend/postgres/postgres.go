package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/table"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/redact"
)

// Handle is the value of backend.postgres(...): a cluster of benchbook's
// own (c != nil) or an existing server reached by DSN.
type Handle struct {
	mu      sync.Mutex
	c       *cluster // nil when attached to an existing server
	connDSN string   // what we connect with; may hold a password, never shown
	pool    *pgxpool.Pool
	version string
	lsn     string            // WAL insert position at the last state mark
	running *runningClusters  // the session's clusters, nil when attached
	res     *runtime.Resource // what the runtime tracks; nil when attached
	// ownConns are the backend pids of the handle's own connections (observer,
	// guard: conn): not the workload's, so a profile leaves them out.
	ownConns sync.Map
}

var (
	_ handle.Observer = (*Handle)(nil)
	_ handle.Preparer = (*Handle)(nil)
	_ handle.Logged   = (*Handle)(nil)
	_ handle.Stateful = (*Handle)(nil)
)

// Kind is backend.postgres(settings={}, dsn=None, image=None, cpus=None,
// memory=None, cpuset=None, pids=None).
var Kind = handle.Kind{
	Name:    "postgres",
	Builtin: starlark.NewBuiltin("backend.postgres", builtin),
	Codecs:  map[string]codec.DecodeFunc{"pg_stats": decodeStats, "plan": decodePlan},
	Inputs:  map[string]runtime.InputChecker{"resource": readGeneration, "image": kit.CurrentImage},
}

// runningClusters are the clusters a session started, by resource dir, so
// that re-running the creating cell (a REPL) reuses or replaces them
// instead of colliding with its own postmaster. Kept with
// runtime.SessionValue: they stop with the session.
type runningClusters struct {
	mu     sync.Mutex
	byRoot map[string]*Handle
}

type runningKey struct{}

func runningIn(th *starlark.Thread) *runningClusters {
	return runtime.SessionValue(th, runningKey{}, func() *runningClusters {
		return &runningClusters{byRoot: map[string]*Handle{}}
	})
}

func (h *Handle) String() string {
	return fmt.Sprintf("<postgres %s %s>", h.version, h.dsnString())
}
func (h *Handle) Type() string          { return "postgres" }
func (h *Handle) Freeze()               {}
func (h *Handle) Truth() starlark.Bool  { return true }
func (h *Handle) Hash() (uint32, error) { return 0, errors.New("unhashable type: postgres") }

// dsnString is the DSN as shown and handed to workloads: no password.
func (h *Handle) dsnString() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.c != nil {
		return h.c.dsn()
	}
	return redact.String(h.connDSN)
}

var pgMethods = kit.Methods[*Handle]{
	"exec":     (*Handle).exec,
	"query":    (*Handle).query,
	"explain":  (*Handle).explain,
	"restart":  (*Handle).restart,
	"settings": (*Handle).settingsMethod,
	"snapshot": (*Handle).snapshot,
	"restore":  (*Handle).restore,
	"stats":    (*Handle).stats,
	"logs":     (*Handle).logs,
	"stop":     (*Handle).stopMethod,
	"watch": func(h *Handle, _ *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		return kit.WatchMethod(h, name, args, kwargs)
	},
	"fingerprint": (*Handle).fingerprint,
}

func (h *Handle) Attr(name string) (starlark.Value, error) {
	switch name {
	case "dsn":
		return starlark.String(h.dsnString()), nil
	case "version":
		return starlark.String(h.version), nil
	case "pid":
		if pid := h.postmasterPID(); pid > 0 {
			return starlark.MakeInt(pid), nil
		}
		return starlark.None, nil
	}
	return pgMethods.Bind(h, "postgres", name), nil
}

func (h *Handle) AttrNames() []string {
	return pgMethods.Names("dsn", "version", "pid")
}

func (h *Handle) postmasterPID() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.c != nil && h.c.running() {
		return h.c.pid()
	}
	return 0
}

// builtin is backend.postgres(settings={}, dsn=None, image=None, ...).
func builtin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var settings *starlark.Dict
	var dsn string
	var opts pgOptions
	var lim kit.LimitArgs
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, append([]any{"settings?", &settings, "dsn?", &dsn,
		"image?", &opts.image}, lim.Pairs()...)...); err != nil {
		return nil, err
	}
	set, err := settingsDict(settings)
	if err != nil {
		return nil, fmt.Errorf("%s: settings: %w", b.Name(), err)
	}
	if opts.limits, err = lim.Limits(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if dsn != "" && (opts.image != "" || !opts.limits.Zero()) {
		return nil, fmt.Errorf("%s: dsn: a server reached by DSN is not ours to put in an image or limit", b.Name())
	}
	var h *Handle
	if dsn != "" {
		h, err = attach(runtime.Context(th), dsn)
	} else {
		h, err = ownCluster(th, set, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s", b.Name(), redact.String(err.Error()))
	}
	return h, nil
}

// attach connects to an existing server. Lifecycle methods are refused.
func attach(ctx context.Context, dsn string) (*Handle, error) {
	h := &Handle{connDSN: dsn}
	if err := h.connect(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// ownCluster finds or creates the cell's cluster and starts it.
func ownCluster(th *starlark.Thread, set map[string]string, opts pgOptions) (*Handle, error) {
	root, err := runtime.ResourceDir(th, "postgres")
	if err != nil {
		return nil, err
	}
	if root, err = filepath.Abs(root); err != nil { // children run in other dirs
		return nil, err
	}
	running := runningIn(th)
	if h := running.reuse(root, set, opts); h != nil {
		h.addInput(th)
		h.c.addPlaceInput(th)
		kit.AddTarget(th, h)
		return h, h.register(th, set, false, false)
	}
	as, err := unprivileged()
	if err != nil {
		return nil, err
	}
	ctx := runtime.Context(th)
	c := &cluster{root: root, as: as, settings: set, limits: opts.limits}
	if err := c.place(ctx, opts); err != nil {
		return nil, err
	}
	created, err := c.ensure(ctx)
	if err != nil {
		return nil, err
	}
	if created {
		fmt.Fprintf(runtime.Stderr(th), "backend.postgres: new cluster in %s\n", root)
	}
	c.loadSettings()
	outside := !created && c.changedOutside()
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	h := &Handle{c: c, running: running}
	if err := h.connect(ctx); err != nil {
		c.stop()
		return nil, err
	}
	running.mu.Lock()
	running.byRoot[root] = h
	running.mu.Unlock()
	runtime.AtExit(th, h.Close)
	h.addInput(th)
	c.addPlaceInput(th)
	kit.AddTarget(th, h)
	return h, h.register(th, set, created, outside)
}

// reuse returns the running handle of root when its settings are the same;
// a running cluster with other settings is stopped.
func (r *runningClusters) reuse(root string, set map[string]string, opts pgOptions) *Handle {
	r.mu.Lock()
	old := r.byRoot[root]
	delete(r.byRoot, root)
	r.mu.Unlock()
	if old == nil {
		return nil
	}
	old.mu.Lock()
	same := old.c != nil && old.c.running() && equalSettings(old.c.settings, set) && old.c.placed(opts)
	old.mu.Unlock()
	if same {
		r.mu.Lock()
		r.byRoot[root] = old
		r.mu.Unlock()
		return old
	}
	old.Close()
	return nil
}

func equalSettings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Close closes the pool and stops the cluster (the AtExit hook).
func (h *Handle) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pool != nil {
		if h.c != nil {
			forgetPasswords(h.pool)
		}
		h.pool.Close()
		h.pool = nil
	}
	if h.c != nil {
		h.c.stop()
		h.running.forget(h)
		h.c.at().close()
	}
}

// forget drops h if it is still the running handle of its root.
func (r *runningClusters) forget(h *Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byRoot[h.c.root] == h {
		delete(r.byRoot, h.c.root)
	}
}

// connect opens the pool, reads the version and enables pg_stat_statements.
func (h *Handle) connect(ctx context.Context) error {
	dsn := h.connDSN
	if h.c != nil {
		dsn = h.c.dsn()
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("dsn: %s", redact.String(err.Error()))
	}
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&h.version); err != nil {
		pool.Close()
		return fmt.Errorf("connect: %w", err)
	}
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil && h.c != nil {
		pool.Close()
		return fmt.Errorf("pg_stat_statements: %w", err)
	}
	h.pool = pool
	return nil
}

// addInput records that the creating cell made this incarnation of the data
// dir, so it goes stale when the data dir is created afresh; the cells that
// use the cluster record its state instead (state.go).
func (h *Handle) addInput(th *starlark.Thread) {
	if h.c == nil {
		return
	}
	gen, _ := readGeneration(h.c.root)
	runtime.AddInput(th, runtime.Input{Kind: "resource", Name: h.c.root, Hash: gen})
}

// db returns the pool, or an error when the cluster is stopped. change says
// whether the caller writes: the cluster's state is tracked (state.go).
func (h *Handle) db(th *starlark.Thread, change bool) (*pgxpool.Pool, error) {
	h.mu.Lock()
	pool := h.pool
	h.mu.Unlock()
	if pool == nil {
		return nil, errors.New("the server is stopped")
	}
	if err := serving(runtime.Context(th), pool); err != nil {
		return nil, err
	}
	if err := h.touch(th, change); err != nil {
		return nil, err
	}
	addServerInput(th, pool, h.root())
	return pool, nil
}

// serving waits until pool has a connection that answers. After a backend
// crash (one killed with SIGKILL, or by the OOM killer) the postmaster
// ends every backend, so the pool's connections are dead, and refuses new
// ones with "the database system is in recovery mode" (SQLSTATE 57P03,
// also "starting up") while it replays the WAL: a notebook's next cell must
// not fail on either, the server comes back by itself. A dead connection
// is dropped and another acquired; a refusal waits, up to readyTimeout.
// Other errors are left to the statement that follows, which reports its
// own.
func serving(ctx context.Context, pool *pgxpool.Pool) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		c, err := pool.Acquire(ctx)
		if err == nil {
			err = c.Ping(ctx)
			if err != nil {
				c.Conn().Close(ctx) // released closed: the pool destroys it
			}
			c.Release()
			if err == nil || ctx.Err() != nil {
				return ctx.Err()
			}
		} else if !refusedWhileRecovering(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not take connections again within %s: %w", readyTimeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// refusedWhileRecovering is PostgreSQL's cannot_connect_now (57P03).
func refusedWhileRecovering(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "57P03"
}

// root is the cluster's directory, "" for an attached server.
func (h *Handle) root() string {
	if h.c == nil {
		return ""
	}
	return h.c.root
}

// own returns the cluster, or an error for an attached server.
func (h *Handle) own(name string) (*cluster, error) {
	if h.c == nil {
		return nil, fmt.Errorf("%s: not available on a server attached by dsn", name)
	}
	return h.c, nil
}

func (h *Handle) exec(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sql string
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 1, &sql); err != nil {
		return nil, err
	}
	db, err := h.db(th, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var n int64
	redact.Learn("", sql) // PASSWORD $$PW$$: the listing, outputs and errors hide PW
	if h.c != nil && (redact.HasSQLPassword(sql) || redact.Known(sql)) {
		n, err = execUnrecorded(runtime.Context(th), db, sql)
	} else {
		var tag pgconn.CommandTag
		tag, err = db.Exec(runtime.Context(th), sql)
		n = tag.RowsAffected()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return starlark.MakeInt64(n), nil
}

func (h *Handle) query(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	sql, params, err := kit.SQLArgs(name, args, kwargs)
	if err != nil {
		return nil, err
	}
	redact.Learn("", sql)
	db, err := h.db(th, !kit.ReadOnly(sql))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cols, rows, err := queryRows(runtime.Context(th), db, sql, params...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return table.New(cols, rows), nil
}

// queryRows reads a whole result as Starlark values.
func queryRows(ctx context.Context, db *pgxpool.Pool, sql string, params ...any) ([]string, [][]starlark.Value, error) {
	rs, err := db.Query(ctx, sql, params...)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	var cols []string
	for _, f := range rs.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	var rows [][]starlark.Value
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, nil, err
		}
		row := make([]starlark.Value, len(vals))
		for i, v := range vals {
			row[i] = kit.ToStarlark(v)
		}
		rows = append(rows, row)
	}
	return cols, rows, rs.Err()
}

func (h *Handle) settingsMethod(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	db, err := h.db(th, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rs, err := db.Query(runtime.Context(th), "SHOW ALL")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer rs.Close()
	d := starlark.NewDict(400)
	for rs.Next() {
		var k, v, desc string
		if err := rs.Scan(&k, &v, &desc); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		_ = d.SetKey(starlark.String(k), starlark.String(v))
	}
	return d, rs.Err()
}

func (h *Handle) logs(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	tail := 50
	if err := starlark.UnpackArgs(name, args, kwargs, "tail?", &tail); err != nil {
		return nil, err
	}
	c, err := h.own(name)
	if err != nil {
		return nil, err
	}
	return starlark.String(strings.Join(tailFile(c.logPath(), tail), "\n")), nil
}

func (h *Handle) stopMethod(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
		return nil, err
	}
	h.Close()
	return starlark.None, nil
}

// withStopped stops the server, runs fn (on the stopped data dir), and starts
// it again, reconnecting the pool.
func (h *Handle) withStopped(th *starlark.Thread, fn func(c *cluster) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.c
	if h.pool != nil {
		forgetPasswords(h.pool)
		h.pool.Close()
		h.pool = nil
	}
	c.stop()
	ferr := fn(c)
	ctx := runtime.Context(th)
	if err := c.start(ctx); err != nil {
		return errors.Join(ferr, err)
	}
	if err := h.connect(ctx); err != nil {
		return errors.Join(ferr, err)
	}
	return ferr
}

func (h *Handle) restart(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var settings *starlark.Dict
	if err := starlark.UnpackArgs(name, args, kwargs, "settings?", &settings); err != nil {
		return nil, err
	}
	set, err := settingsDict(settings)
	if err != nil {
		return nil, fmt.Errorf("%s: settings: %w", name, err)
	}
	c, err := h.own(name)
	if err != nil {
		return nil, err
	}
	if err := h.touch(th, true); err != nil {
		return nil, err
	}
	h.mu.Lock()
	previous := c.settings
	h.mu.Unlock()
	err = h.withStopped(th, func(c *cluster) error {
		merged := map[string]string{}
		for k, v := range c.settings {
			merged[k] = v
		}
		for k, v := range set {
			merged[k] = v
		}
		c.settings = merged
		return nil
	})
	if err != nil {
		// Leave the cluster as it was rather than down.
		if rerr := h.withStopped(th, func(c *cluster) error { c.settings = previous; return nil }); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restarting with the previous settings: %w", rerr))
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return starlark.None, nil
}

func (h *Handle) snapshot(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return h.copyAction(th, name, args, kwargs, func(c *cluster, snap string) error {
		return copyDir(runtime.Context(th), c.dataDir(), c.snapshotDir(snap))
	})
}

func (h *Handle) restore(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return h.copyAction(th, name, args, kwargs, func(c *cluster, snap string) error {
		if err := restoreSnapshot(runtime.Context(th), c.snapshotDir(snap), c.dataDir()); err != nil {
			return err
		}
		c.loadSettings()
		return nil
	})
}

// copyAction is snapshot and restore: a copy of a stopped data dir, which
// keeps every database, statistic and setting exactly as it was.
func (h *Handle) copyAction(th *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple, copyFn func(*cluster, string) error) (starlark.Value, error) {
	var snap string
	if err := starlark.UnpackPositionalArgs(name, args, kwargs, 1, &snap); err != nil {
		return nil, err
	}
	if snap == "" || strings.ContainsAny(snap, "/\\") || strings.HasPrefix(snap, ".") {
		return nil, fmt.Errorf("%s: name must be a plain word, got %q", name, snap)
	}
	c, err := h.own(name)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(name, "restore") {
		if _, err := os.Stat(c.snapshotDir(snap)); err != nil {
			return nil, fmt.Errorf("%s: no snapshot %q", name, snap)
		}
	}
	if err := h.touch(th, strings.HasSuffix(name, "restore")); err != nil {
		return nil, err
	}
	if err := h.withStopped(th, func(c *cluster) error { return copyFn(c, snap) }); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return starlark.None, nil
}

// conn takes one connection from the pool for a sequence of monitor queries.
func (h *Handle) conn(ctx context.Context) (*pgx.Conn, error) {
	h.mu.Lock()
	dsn := h.connDSN
	if h.c != nil {
		dsn = h.c.dsn()
	}
	h.mu.Unlock()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		h.ownConns.Store(int(conn.PgConn().PID()), true)
	}
	return conn, err
}
