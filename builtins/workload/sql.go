package workload

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
)

// sqlArgs are workload.sql's own arguments.
type sqlArgs struct {
	db      starlark.Value
	query   string
	queries starlark.Value
	args    starlark.Value
}

// maxSQLInflight caps the default open-loop pool: every in-flight slot is
// a server connection, and PostgreSQL's default max_connections is 100.
const maxSQLInflight = 64

// statement is one SQL statement of the script a request runs.
type statement struct {
	tag     string
	sql     string
	name    string // of its prepared statement, on every connection
	nparams int    // highest $n in the text: how many args it takes
}

// sqlTarget runs the script (one or more statements, in order) per request
// on a pgx pool in cache_statement mode.
type sqlTarget struct {
	pool  *pgxpool.Pool
	stmts []statement
	args  func(seq int64) ([]any, error)

	mu    sync.Mutex
	hists []*sqlHists
}

// sqlHists are one worker's pool-acquire and per-statement histograms.
type sqlHists struct {
	acquire *hdrhistogram.Histogram
	byTag   []*hdrhistogram.Histogram // by statement index
}

// newHists registers a worker's histograms for merged.
func (t *sqlTarget) newHists() *sqlHists {
	h := &sqlHists{acquire: newHist(), byTag: make([]*hdrhistogram.Histogram, len(t.stmts))}
	for i := range h.byTag {
		h.byTag[i] = newHist()
	}
	t.mu.Lock()
	t.hists = append(t.hists, h)
	t.mu.Unlock()
	return h
}

// sqlClient runs one request at a time on a connection it acquires from the
// pool per request: the open loop's worker.
type sqlClient struct {
	t   *sqlTarget
	h   *sqlHists
	eqb pgx.ExtendedQueryBuilder // parameter buffers, reused request to request

	// Cancellation without a per-query context watch: pgconn registers a
	// context.AfterFunc for every query given a cancellable context (a
	// fifth of the client's user CPU per point select). Instead the client
	// watches its worker's context once, and abort breaks the connection in
	// use by putting its deadline in the past.
	watched context.Context
	stop    func() bool
	aborted atomic.Bool
	cur     atomic.Pointer[pgconn.PgConn]
}

func sqlBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := sqlArgs{queries: starlark.None, args: starlark.None}
	la := newLoadArgs()
	pairs := append([]any{"db", &s.db, "query?", &s.query, "queries?", &s.queries, "args?", &s.args}, la.pairs()...)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, err
	}
	spec, err := la.spec(b.Name(), th)
	if err != nil {
		return nil, err
	}
	if spec.clients == 0 && la.maxInflight == starlark.None {
		spec.maxInflight = min(spec.maxInflight, maxSQLInflight)
	}
	tgt, check, err := s.target(b.Name(), th, spec)
	if err != nil {
		return nil, err
	}
	defer tgt.pool.Close()
	if spec.label == "" {
		spec.label = tgt.stmts[0].sql
	}
	res := runLoad(runtime.Context(th), spec, tgt)
	if w := check(); w != "" {
		res.warnings = append(res.warnings, w)
	}
	run := newRun("sql", spec, res)
	run.acquire, run.byTag = tgt.merged()
	return run, nil
}

func (s *sqlArgs) target(name string, th *starlark.Thread, spec loadSpec) (*sqlTarget, func() string, error) {
	dsn, err := dsnOf(name, s.db)
	if err != nil {
		return nil, nil, err
	}
	t := &sqlTarget{}
	if t.stmts, err = s.statements(name); err != nil {
		return nil, nil, err
	}
	check, err := s.argGen(name, th, t)
	if err != nil {
		return nil, nil, err
	}
	conns := spec.clients
	if conns == 0 {
		conns = spec.maxInflight
	}
	if t.pool, err = openPool(runtime.Context(th), dsn, conns, spec.timeout); err != nil {
		return nil, nil, fmt.Errorf("%s: db: %w", name, err)
	}
	if err := t.prepare(runtime.Context(th), spec.timeout); err != nil {
		t.pool.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, check, nil
}

// prepare prepares every statement once before the run, so a statement the
// server refuses (a typo, a missing table) is an error naming it rather
// than a run in which every request failed.
func (t *sqlTarget) prepare(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	c, err := t.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("db: connect: %w", err)
	}
	defer c.Release()
	for _, st := range t.stmts {
		if _, err := c.Conn().Prepare(ctx, st.name, st.sql); err != nil {
			return fmt.Errorf("%s statement %q: %w", st.tag, st.sql, err)
		}
	}
	return nil
}

// dsnOf accepts a DSN string or a handle with a dsn attribute.
func dsnOf(name string, db starlark.Value) (string, error) {
	if s, ok := starlark.AsString(db); ok {
		return s, nil
	}
	if h, ok := db.(starlark.HasAttrs); ok {
		if v, err := h.Attr("dsn"); err == nil && v != nil {
			if s, ok := starlark.AsString(v); ok {
				return s, nil
			}
		}
	}
	return "", fmt.Errorf("%s: db must be a DSN string or a handle with .dsn, got %s", name, db.Type())
}

// openPool connects every connection up front so the run does not measure
// connection setup.
func openPool(ctx context.Context, dsn string, conns int, timeout time.Duration) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("malformed DSN: %w", err)
	}
	cfg.MaxConns, cfg.MinConns = int32(conns), 0
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return newRawConn(c), nil
	}
	cctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(cctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := warmPool(cctx, pool, conns); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return pool, nil
}

func warmPool(ctx context.Context, pool *pgxpool.Pool, n int) error {
	held := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for range n {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		held = append(held, c)
	}
	return nil
}

var paramRe = regexp.MustCompile(`\$(\d+)`)

// statements reads query or queries: a list of SQL strings (tagged by their
// first word) or a dict tag -> SQL.
func (s *sqlArgs) statements(name string) ([]statement, error) {
	var out []statement
	switch {
	case s.query != "" && s.queries != starlark.None:
		return nil, fmt.Errorf("%s: give query or queries, not both", name)
	case s.query != "":
		out = append(out, statement{sql: s.query})
	case s.queries == starlark.None:
		return nil, fmt.Errorf("%s: query (a SQL string) or queries is required", name)
	default:
		var err error
		if out, err = queryList(name, s.queries); err != nil {
			return nil, err
		}
	}
	return tagStatements(out), nil
}

func queryList(name string, v starlark.Value) ([]statement, error) {
	var out []statement
	switch v := v.(type) {
	case *starlark.Dict:
		for _, kv := range v.Items() {
			tag, ok1 := starlark.AsString(kv[0])
			q, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%s: queries: want tag -> SQL strings, got %s: %s", name, kv[0].Type(), kv[1].Type())
			}
			out = append(out, statement{tag: tag, sql: q})
		}
	case starlark.Indexable:
		for i := range v.Len() {
			q, ok := starlark.AsString(v.Index(i))
			if !ok {
				return nil, fmt.Errorf("%s: queries[%d]: want a SQL string, got %s", name, i, v.Index(i).Type())
			}
			out = append(out, statement{sql: q})
		}
	default:
		return nil, fmt.Errorf("%s: queries must be a list of SQL strings or a dict tag -> SQL, got %s", name, v.Type())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: queries is empty", name)
	}
	return out, nil
}

// tagStatements names untagged statements by their first word (SELECT,
// UPDATE), numbering repeats, and counts their parameters.
func tagStatements(stmts []statement) []statement {
	seen := map[string]int{}
	for i := range stmts {
		st := &stmts[i]
		st.name = "benchbook_" + strconv.Itoa(i)
		for _, m := range paramRe.FindAllStringSubmatch(st.sql, -1) {
			n, _ := strconv.Atoi(m[1])
			st.nparams = max(st.nparams, n)
		}
		if st.tag != "" {
			continue
		}
		st.tag = "SQL"
		if f := strings.Fields(st.sql); len(f) > 0 {
			st.tag = strings.ToUpper(f[0])
		}
		seen[st.tag]++
		if n := seen[st.tag]; n > 1 {
			st.tag += " #" + strconv.Itoa(n)
		}
	}
	return stmts
}

func (t *sqlTarget) newClient() client {
	return &sqlClient{t: t, h: t.newHists()}
}

// abort breaks the statement in flight, if any, and refuses the next ones:
// Ctrl-C, or the load context's hard end.
func (c *sqlClient) abort() {
	c.aborted.Store(true)
	if pc := c.cur.Load(); pc != nil {
		_ = pc.Conn().SetDeadline(time.Unix(1, 0))
	}
}

func (c *sqlClient) close() {
	if c.stop != nil {
		c.stop()
	}
}

// watch aborts the client when ctx ends; registered once per context.
func (c *sqlClient) watch(ctx context.Context) {
	if ctx == c.watched {
		return
	}
	if c.stop != nil {
		c.stop()
	}
	c.watched, c.stop = ctx, context.AfterFunc(ctx, c.abort)
}

func (c *sqlClient) do(ctx context.Context, r request) string {
	c.watch(ctx)
	var args []any
	if c.t.args != nil {
		var err error
		if args, err = c.t.args(r.seq); err != nil {
			return classGenerator
		}
	}
	t0 := time.Now()
	conn, err := c.t.pool.Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Release()
	c.cur.Store(conn.Conn().PgConn())
	defer c.cur.Store(nil)
	if c.aborted.Load() {
		return classInterrupted
	}
	t1 := time.Now()
	if r.measured {
		recordUs(c.h.acquire, t1.Sub(t0))
	}
	for i, st := range c.t.stmts {
		if class := c.runStatement(conn.Conn(), st, args); class != "" {
			return class
		}
		t2 := time.Now()
		if r.measured {
			recordUs(c.h.byTag[i], t2.Sub(t1))
		}
		t1 = t2
	}
	return ""
}

// runStatement runs st on conn through pgconn's extended protocol:
// the statement is prepared once per connection (pgx remembers it by name),
// the parameters are encoded into the client's reused buffers, and the rows
// are read without being decoded. This is what pgbench -M prepared does;
// pgx's Query and Rows cost a third more client CPU per point select.
func (c *sqlClient) runStatement(conn *pgx.Conn, st statement, args []any) string {
	ctx := context.Background() // cancelled by abort, see sqlClient
	if len(args) < st.nparams {
		return classFewArgs
	}
	sd, err := conn.Prepare(ctx, st.name, st.sql)
	if err != nil {
		return classify(err)
	}
	if err := c.eqb.Build(conn.TypeMap(), sd, args[:st.nparams]); err != nil {
		return classify(err)
	}
	rr := conn.PgConn().ExecStatement(ctx, sd, c.eqb.ParamValues, c.eqb.ParamFormats, c.eqb.ResultFormats)
	for rr.NextRow() {
	}
	if _, err := rr.Close(); err != nil {
		return classify(err)
	}
	return ""
}

func recordUs(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(int64(d/time.Microsecond), histMin), histMax))
}

// merged returns the pool-acquire and per-tag histograms of all clients.
func (t *sqlTarget) merged() (*hdrhistogram.Histogram, map[string]*hdrhistogram.Histogram) {
	acq := newHist()
	byTag := map[string]*hdrhistogram.Histogram{}
	for _, st := range t.stmts {
		byTag[st.tag] = newHist()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range t.hists {
		acq.Merge(h.acquire)
		for i, th := range h.byTag {
			byTag[t.stmts[i].tag].Merge(th)
		}
	}
	return acq, byTag
}

// argGen installs args: a static list, a gocode func, or a Starlark callable.
func (s *sqlArgs) argGen(name string, th *starlark.Thread, t *sqlTarget) (func() string, error) {
	switch v := s.args.(type) {
	case starlark.NoneType:
		return noWarning, nil
	case *starlark.List, starlark.Tuple:
		vals, err := goValues(v.(starlark.Indexable))
		if err != nil {
			return nil, fmt.Errorf("%s: args: %w", name, err)
		}
		t.args = func(int64) ([]any, error) { return vals, nil }
		return noWarning, nil
	case interface{ Func() any }:
		recordGenInput(th, v)
		gen, err := goArgsGen(name, v.Func())
		t.args = recovered(gen)
		return noWarning, err
	case starlark.Callable:
		call, check := starlarkCaller(th, v)
		t.args = func(seq int64) ([]any, error) {
			res, err := call(seq)
			if err != nil {
				return nil, err
			}
			l, ok := res.(starlark.Indexable)
			if !ok {
				return nil, fmt.Errorf("args returned %s, want a list", res.Type())
			}
			return goValues(l)
		}
		return check, nil
	}
	return nil, fmt.Errorf("%s: args must be a list, a function or None, got %s", name, s.args.Type())
}

func goArgsGen(name string, f any) (func(int64) ([]any, error), error) {
	switch f := f.(type) {
	case func() []any:
		return func(int64) ([]any, error) { return f(), nil }, nil
	case func(int64) []any:
		return func(seq int64) ([]any, error) { return f(seq), nil }, nil
	}
	return nil, fmt.Errorf("%s: args: a Go function must be func() []any or func(int64) []any, got %T", name, f)
}

// goValues converts Starlark query arguments to Go values pgx encodes.
func goValues(l starlark.Indexable) ([]any, error) {
	out := make([]any, l.Len())
	for i := range out {
		switch v := l.Index(i).(type) {
		case starlark.NoneType:
			out[i] = nil
		case starlark.Bool:
			out[i] = bool(v)
		case starlark.Int:
			n, ok := v.Int64()
			if !ok {
				return nil, fmt.Errorf("arg %d: %s does not fit in int64", i, v)
			}
			out[i] = n
		case starlark.Float:
			out[i] = float64(v)
		case starlark.String:
			out[i] = string(v)
		case starlark.Bytes:
			out[i] = []byte(v)
		default:
			return nil, fmt.Errorf("arg %d: cannot pass a %s to SQL", i, v.Type())
		}
	}
	return out, nil
}
