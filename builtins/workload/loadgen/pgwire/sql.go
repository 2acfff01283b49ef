package pgwire

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

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/netpoll"
)

// Statement is one SQL statement of the script a request runs.
type Statement struct {
	Tag     string `json:"tag,omitempty"` // names its histogram; "" for its first word (SELECT, UPDATE #2)
	SQL     string `json:"sql"`
	name    string // of its prepared statement, on every connection
	nparams int    // highest $n in the text: how many args it takes
}

// SQLSpec is a PostgreSQL target: where, and what each request runs.
type SQLSpec struct {
	DSN        string                         // a pgx connection string
	Statements []Statement                    // run in order, one script per request
	Args       func(seq int64) ([]any, error) // request seq's arguments; nil for none
	Conns      int                            // connections: the clients, or the open loop's max in flight
	Timeout    time.Duration                  // statement_timeout, and the bound on connecting

	// TaggedArgs is Args with each request's tag, for a generator that
	// names them; nil for none.
	TaggedArgs func(seq int64) ([]any, string, error)
	// Requests is a mix instead of Statements: each request runs one of
	// these scripts, drawn by weight (Mix, seeded by Seed), counted under
	// its tag.
	Requests []SQLRequest
	Seed     uint64
}

// SQLRequest is one request of a mix: its script and its arguments.
type SQLRequest struct {
	Tag        string                         // "": its first statement's tag
	Weight     float64                        // its share is weight over the sum; 0 counts as 1
	Statements []Statement                    // run in order
	Args       func(seq int64) ([]any, error) // nil for none
}

// sqlKind is one script a request may run: statements first..end-1 of
// the target's, with its arguments.
type sqlKind struct {
	tag        string
	first, end int
	args       func(seq int64) ([]any, string, error)
}

// SQLTarget runs a script (one or more statements, in order) per request
// on a pgx pool in cache_statement mode: the one script, or a mix's draw.
type SQLTarget struct {
	pool   *pgxpool.Pool
	stmts  []Statement // every kind's, each prepared once per connection
	kinds  []sqlKind
	draw   *loadgen.Mix // nil: kinds[0] every time
	tagged bool         // a mix, or TaggedArgs: requests carry tags

	// raw says the connections are plain sockets an event loop can read
	// and write itself; over TLS (sslmode=require, or prefer against a
	// server that has it) they are not, and workers run the load through
	// pgx instead, as https does through crypto/tls.
	raw bool

	mu    sync.Mutex
	hists []*sqlHists
}

// OpenSQL connects every connection up front (the run does not measure
// connection setup) and prepares every statement once, so a statement the
// server refuses (a typo, a missing table) is an error naming it rather
// than a run in which every request failed. Close releases the pool.
func OpenSQL(ctx context.Context, spec SQLSpec) (*SQLTarget, error) {
	t, err := newSQLTarget(spec)
	if err != nil {
		return nil, err
	}
	if t.pool, err = openPool(ctx, spec.DSN, spec.Conns, spec.Timeout); err != nil {
		return nil, fmt.Errorf("db: %w", err)
	}
	if err := t.prepare(ctx, spec.Timeout); err != nil {
		t.pool.Close()
		return nil, err
	}
	return t, nil
}

// newSQLTarget lays out spec's scripts, not yet connected.
func newSQLTarget(spec SQLSpec) (*SQLTarget, error) {
	t := &SQLTarget{}
	switch {
	case len(spec.Requests) > 0 && len(spec.Statements) > 0:
		return nil, fmt.Errorf("give statements or requests, not both")
	case len(spec.Requests) > 0 && (spec.Args != nil || spec.TaggedArgs != nil):
		return nil, fmt.Errorf("each of requests has its own args")
	case len(spec.Requests) == 0:
		args := spec.TaggedArgs
		if args == nil && spec.Args != nil {
			args = untaggedArgs(spec.Args)
		}
		t.stmts = spec.Statements
		t.kinds = []sqlKind{{end: len(spec.Statements), args: args}}
		t.tagged = spec.TaggedArgs != nil
	default:
		weights := make([]float64, len(spec.Requests))
		for i, rq := range spec.Requests {
			if len(rq.Statements) == 0 {
				return nil, fmt.Errorf("requests[%d]: no statements", i)
			}
			k := sqlKind{tag: rq.Tag, first: len(t.stmts), end: len(t.stmts) + len(rq.Statements)}
			if rq.Args != nil {
				k.args = untaggedArgs(rq.Args)
			}
			t.kinds = append(t.kinds, k)
			t.stmts = append(t.stmts, rq.Statements...)
			weights[i] = max(rq.Weight, 0)
			if rq.Weight == 0 {
				weights[i] = 1
			}
		}
		var err error
		if t.draw, err = loadgen.NewMix(weights, spec.Seed); err != nil {
			return nil, err
		}
		t.tagged = true
	}
	if len(t.stmts) == 0 {
		return nil, fmt.Errorf("no statements")
	}
	t.stmts = tagStatements(append([]Statement(nil), t.stmts...))
	for i := range t.kinds {
		if k := &t.kinds[i]; k.tag == "" && t.draw != nil {
			k.tag = t.stmts[k.first].Tag
		}
	}
	return t, nil
}

func untaggedArgs(f func(int64) ([]any, error)) func(int64) ([]any, string, error) {
	return func(seq int64) ([]any, string, error) {
		a, err := f(seq)
		return a, "", err
	}
}

// pick is the script of request seq of stream (see Mix).
func (t *SQLTarget) pick(stream, seq int64) *sqlKind {
	if t.draw == nil {
		return &t.kinds[0]
	}
	return &t.kinds[t.draw.Pick(stream, seq)]
}

// argsOf are request seq's arguments and its tag: the script's, or what a
// tagged generator named ("" in an untagged run).
func (k *sqlKind) argsOf(seq int64, tagged bool) ([]any, string, error) {
	if k.args == nil {
		return nil, k.tag, nil
	}
	args, tag, err := k.args(seq)
	if tag == "" {
		tag = k.tag
	}
	if err != nil && tagged && tag == "" {
		tag = loadgen.Untagged
	}
	return args, tag, err
}

// Scripts are the scripts (each its statements' SQL, in order) each tag of
// a mix runs (nil without a mix), and all the target's.
func (t *SQLTarget) Scripts() (map[string][][]string, [][]string) {
	var all [][]string
	tags := map[string][][]string{}
	for _, k := range t.kinds {
		var script []string
		for _, st := range t.stmts[k.first:k.end] {
			script = append(script, st.SQL)
		}
		all = append(all, script)
		if t.draw != nil {
			tags[k.tag] = append(tags[k.tag], script)
		}
	}
	if t.draw == nil {
		return nil, all
	}
	return tags, all
}

// Shares are each tag's share of the mix's weights; nil without a mix.
func (t *SQLTarget) Shares() map[string]float64 {
	return loadgen.MixShares(t.kindTags(), t.draw)
}

// kindTags are the tags of the mix's requests, one per kind.
func (t *SQLTarget) kindTags() []string {
	tags := make([]string, len(t.kinds))
	for i, k := range t.kinds {
		tags[i] = k.tag
	}
	return tags
}

// Tags are the mix's tags in order, each once; nil for an untagged target.
func (t *SQLTarget) Tags() []string {
	switch {
	case t.draw != nil:
		return loadgen.UniqueTags(t.kindTags())
	case t.tagged:
		return []string{}
	}
	return nil
}

func (t *SQLTarget) TagOf(seq int64) string {
	k := t.pick(0, seq)
	if t.draw != nil {
		return k.tag
	}
	if _, tag, err := k.argsOf(seq, t.tagged); err == nil && tag != "" {
		return tag
	}
	return loadgen.Untagged
}

// SQLShares checks spec's scripts and says each tag's share of a mix's
// weights (nil without a mix), without connecting: for a run on agents.
func SQLShares(spec SQLSpec) (map[string]float64, error) {
	t, err := newSQLTarget(spec)
	if err != nil {
		return nil, err
	}
	return t.Shares(), nil
}

// Close closes the pool's connections.
func (t *SQLTarget) Close() { t.pool.Close() }

// Statements are the script's statements, tagged.
func (t *SQLTarget) Statements() []Statement { return t.stmts }

// sqlHists are one worker's pool-acquire and per-statement histograms.
type sqlHists struct {
	acquire *hdrhistogram.Histogram
	byTag   []*hdrhistogram.Histogram // by statement index
}

// newHists registers a worker's histograms for merged.
func (t *SQLTarget) newHists() *sqlHists {
	h := &sqlHists{acquire: loadgen.NewHist(), byTag: make([]*hdrhistogram.Histogram, len(t.stmts))}
	for i := range h.byTag {
		h.byTag[i] = loadgen.NewHist()
	}
	t.mu.Lock()
	t.hists = append(t.hists, h)
	t.mu.Unlock()
	return h
}

// sqlClient runs one request at a time on a connection it acquires from the
// pool per request: the open loop's worker.
type sqlClient struct {
	t   *SQLTarget
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

	next sqlMade // Make made the next request (k set): Do sends it
}

// sqlMade is a request made: its script, its arguments and its tag, or
// the generator's failure to make it.
type sqlMade struct {
	k      *sqlKind
	args   []any
	tag    string
	genErr bool
}

// Make makes the next request (see Maker): its script (a mix's draw) and
// its generator's arguments.
func (c *sqlClient) Make(r loadgen.Request) string {
	c.next = c.t.made(r.Stream, r.Seq)
	return c.next.tag
}

// made makes request seq of stream.
func (t *SQLTarget) made(stream, seq int64) sqlMade {
	k := t.pick(stream, seq)
	args, tag, err := k.argsOf(seq, t.tagged)
	return sqlMade{k: k, args: args, tag: tag, genErr: err != nil}
}

// prepare prepares every statement once before the run, so a statement the
// server refuses (a typo, a missing table) is an error naming it rather
// than a run in which every request failed.
func (t *SQLTarget) prepare(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	c, err := t.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("db: connect: %w", err)
	}
	defer c.Release()
	for _, st := range t.stmts {
		if _, err := c.Conn().Prepare(ctx, st.name, st.SQL); err != nil {
			return fmt.Errorf("%s statement %q: %w", st.Tag, st.SQL, err)
		}
	}
	_, err = netpoll.ConnFD(c.Conn().PgConn().Conn())
	t.raw = err == nil
	return nil
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
		return netpoll.NewRawConn(c), nil
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

// tagStatements names untagged statements by their first word (SELECT,
// UPDATE), numbering repeats, and counts their parameters.
func tagStatements(stmts []Statement) []Statement {
	seen := map[string]int{}
	for i := range stmts {
		st := &stmts[i]
		st.name = "benchbook_" + strconv.Itoa(i)
		for _, m := range paramRe.FindAllStringSubmatch(st.SQL, -1) {
			n, _ := strconv.Atoi(m[1])
			st.nparams = max(st.nparams, n)
		}
		if st.Tag != "" {
			continue
		}
		st.Tag = "SQL"
		if f := strings.Fields(st.SQL); len(f) > 0 {
			st.Tag = strings.ToUpper(f[0])
		}
		seen[st.Tag]++
		if n := seen[st.Tag]; n > 1 {
			st.Tag += " #" + strconv.Itoa(n)
		}
	}
	return stmts
}

var (
	_ loadgen.Target = (*SQLTarget)(nil)
	_ loadgen.Tagged = (*SQLTarget)(nil)
	_ loadgen.Client = (*sqlClient)(nil)
	_ loadgen.Maker  = (*sqlClient)(nil)
)

func (t *SQLTarget) NewClient() loadgen.Client {
	return &sqlClient{t: t, h: t.newHists()}
}

// Abort breaks the statement in flight, if any, and refuses the next ones:
// Ctrl-C, or the load context's hard end.
func (c *sqlClient) Abort() {
	c.aborted.Store(true)
	if pc := c.cur.Load(); pc != nil {
		_ = pc.Conn().SetDeadline(time.Unix(1, 0))
	}
}

func (c *sqlClient) Close() {
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
	c.watched, c.stop = ctx, context.AfterFunc(ctx, c.Abort)
}

func (c *sqlClient) Do(ctx context.Context, r loadgen.Request) (string, string) {
	c.watch(ctx)
	m := c.next
	if m.k == nil {
		m = c.t.made(r.Stream, r.Seq)
	}
	c.next = sqlMade{}
	k, args, tag := m.k, m.args, m.tag
	if m.genErr {
		return loadgen.ClassGenerator, tag
	}
	t0 := time.Now()
	conn, err := c.t.pool.Acquire(ctx)
	if err != nil {
		return loadgen.Classify(err), tag
	}
	defer conn.Release()
	c.cur.Store(conn.Conn().PgConn())
	defer c.cur.Store(nil)
	if c.aborted.Load() {
		return loadgen.ClassInterrupted, tag
	}
	t1 := time.Now()
	if r.Measured {
		recordUs(c.h.acquire, t1.Sub(t0))
	}
	for i := k.first; i < k.end; i++ {
		if class := c.runStatement(conn.Conn(), c.t.stmts[i], args); class != "" {
			return class, tag
		}
		t2 := time.Now()
		if r.Measured {
			recordUs(c.h.byTag[i], t2.Sub(t1))
		}
		t1 = t2
	}
	return "", tag
}

// runStatement runs st on conn through pgconn's extended protocol:
// the statement is prepared once per connection (pgx remembers it by name),
// the parameters are encoded into the client's reused buffers, and the rows
// are read without being decoded. This is what pgbench -M prepared does;
// pgx's Query and Rows cost a third more client CPU per point select.
func (c *sqlClient) runStatement(conn *pgx.Conn, st Statement, args []any) string {
	ctx := context.Background() // cancelled by abort, see sqlClient
	if len(args) < st.nparams {
		return loadgen.ClassFewArgs
	}
	sd, err := conn.Prepare(ctx, st.name, st.SQL)
	if err != nil {
		return loadgen.Classify(err)
	}
	if err := c.eqb.Build(conn.TypeMap(), sd, args[:st.nparams]); err != nil {
		return loadgen.Classify(err)
	}
	rr := conn.PgConn().ExecStatement(ctx, sd, c.eqb.ParamValues, c.eqb.ParamFormats, c.eqb.ResultFormats)
	for rr.NextRow() {
	}
	if _, err := rr.Close(); err != nil {
		return loadgen.Classify(err)
	}
	return ""
}

func recordUs(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(int64(d/time.Microsecond), loadgen.HistMin), loadgen.HistMax))
}

// Histograms are the pool acquires (the open loop's wait per request; the
// closed loop's per client and broken connection) and the latency of each
// statement by tag, over the measurement window.
func (t *SQLTarget) Histograms() (*hdrhistogram.Histogram, map[string]*hdrhistogram.Histogram) {
	acq := loadgen.NewHist()
	byTag := map[string]*hdrhistogram.Histogram{}
	for _, st := range t.stmts {
		byTag[st.Tag] = loadgen.NewHist()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range t.hists {
		acq.Merge(h.acquire)
		for i, th := range h.byTag {
			byTag[t.stmts[i].Tag].Merge(th)
		}
	}
	return acq, byTag
}
