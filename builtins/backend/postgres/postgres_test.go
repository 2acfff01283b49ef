package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/runattrs"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

func TestResourceReuse(t *testing.T) {
	if reuseRows != 42 {
		t.Fatalf("second run found %d rows of the first run's table, want 42", reuseRows)
	}
	gen, err := readGeneration(shared.c.root)
	if err != nil || len(gen) != 24 {
		t.Fatalf("generation %q, %v", gen, err)
	}
	if g, _ := readGeneration(t.TempDir()); g != "" {
		t.Fatalf("missing generation file reads %q, want \"\" (stale)", g)
	}
}

func TestStartAndSettings(t *testing.T) {
	mustRun(t, `
assert.true(pg.version.startswith("1"))
assert.true(pg.pid > 0)
assert.true(pg.dsn.startswith("postgres://postgres@127.0.0.1:"))
s = pg.settings()
assert.eq(s["shared_buffers"], "32MB")
assert.eq(s["pg_stat_statements.track_planning"], "on")
assert.eq(s["fsync"], "on")
assert.eq(pg.exec("SELECT 1"), 1)
rows = pg.query("SELECT $1::int + 1 AS x, $2::text AS y", 41, "hi")
assert.eq(rows[0]["x"], 42)
assert.eq(rows[0]["y"], "hi")
plan = pg.explain("SELECT count(*) FROM reuse_t")
assert.true("Aggregate" in plan.text)
assert.eq(str(plan), plan.text)
assert.true(plan.cost > 0)
assert.true(plan.execution_ms >= 0)
assert.true(plan.shared_hit + plan.shared_read >= 1)
assert.true("database system is ready" in pg.logs(tail = 200))
`)
}

func TestRestartWithNewSettings(t *testing.T) {
	before := shared.postmasterPID()
	mustRun(t, `
dsn = pg.dsn
pg.restart(settings = {"work_mem": "7MB"})
assert.eq(pg.dsn, dsn)  # the same port when it is still free
s = pg.settings()
assert.eq(s["work_mem"], "7MB")
assert.eq(s["shared_buffers"], "32MB")
`)
	if after := shared.postmasterPID(); after == before || after == 0 {
		t.Fatalf("postmaster pid %d -> %d: not restarted", before, after)
	}
}

func TestBadSetting(t *testing.T) {
	start := time.Now()
	_, err := run(t, `pg.restart(settings = {"shared_buffers": "lots"})`)
	if err == nil {
		t.Fatal("restart with shared_buffers=lots succeeded")
	}
	t.Logf("bad setting error:\n%v", err)
	if !strings.Contains(err.Error(), `invalid value for parameter "shared_buffers": "lots"`) {
		t.Fatalf("error lacks PostgreSQL's message: %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	mustRun(t, `
assert.eq(pg.settings()["shared_buffers"], "32MB")  # back up, as before
assert.fails(lambda: pg.restart(settings = {"port": 5432}), "port is benchbook's to choose")
assert.fails(lambda: pg.restart(settings = {"Log_Min_Error_Statement": "error"}), "Log_Min_Error_Statement is benchbook's to choose \\(the log never holds a failing statement's text")
assert.eq(pg.query("SHOW log_min_error_statement")[0]["log_min_error_statement"], "panic")
assert.fails(lambda: pg.restart(settings = {"work_mem": "1MB\nfsync = off"}), "on one line")
assert.fails(lambda: pg.restart(settings = {"work_mem": [1]}), "must be a string, number or bool")
`)
}

func TestSnapshotRestore(t *testing.T) {
	mustRun(t, `
pg.exec("CREATE TABLE snap_t (id int primary key, v text)")
pg.exec("INSERT INTO snap_t SELECT i, md5(i::text) FROM generate_series(1, 5000) i")
q = "SELECT count(*) AS n, md5(string_agg(id::text || v, ',' ORDER BY id)) AS sum FROM snap_t"
before = pg.query(q)[0]
pg.snapshot("base")
pg.exec("DELETE FROM snap_t WHERE id % 3 = 0; UPDATE snap_t SET v = 'x' WHERE id < 10")
changed = pg.query(q)[0]
assert.ne(changed["n"], before["n"])
pg.restore("base")
after = pg.query(q)[0]
assert.eq(after["n"], 5000)
assert.eq(after["sum"], before["sum"])
assert.fails(lambda: pg.restore("nope"), "no snapshot")
`)
}

// TestQueryAnswersAreEquivalent: the new user's pattern (issue 33): the
// answers of pg.query() under two arms, one with an index, are compared
// with equivalent(). Two identical answers used to compare unequal (tables
// compared by identity), and a real difference was shown cut to the same
// prefix in both arms.
func TestQueryAnswersAreEquivalent(t *testing.T) {
	mustRun(t, `
pg.exec("CREATE TABLE eq_obs (id int PRIMARY KEY, code text, ts timestamptz, v numeric)")
pg.exec("INSERT INTO eq_obs SELECT i, 'c' || (i % 3), timestamptz '2025-01-01' + i * interval '1 minute', i / 7.0 FROM generate_series(1, 3000) i")
q = "SELECT id, ts, v FROM eq_obs WHERE code = $1 ORDER BY ts DESC, id LIMIT 40"
def answers():
    return {"code %d" % c: pg.query(q, "c%d" % c) for c in range(3)}
a = answers()
pg.exec("CREATE INDEX eq_obs_ts ON eq_obs (ts DESC) WHERE code IS NOT NULL")
b = answers()
assert.eq(a, b)
assert.true(equivalent(a, b).ok)
# Plans compare by what EXPLAIN said, too.
p = "SELECT id FROM eq_obs WHERE code = 'c1' ORDER BY ts DESC LIMIT 5"
assert.eq(pg.explain(p, analyze = False), pg.explain(p, analyze = False))
assert.ne(pg.explain(p, analyze = False), pg.explain("SELECT 1", analyze = False))
pg.exec("UPDATE eq_obs SET v = v + 1 WHERE id = 2997")
c = answers()
assert.fails(lambda: equivalent(a, c), '"code 0": first differ at row 1, column "v": a = 428\\.142857\\d*, b = 429\\.142857')
`)
}

func TestStatsDeltas(t *testing.T) {
	g := mustRun(t, `
pg.exec("CREATE TABLE stats_t (id int, v text)")
a = pg.stats()
N = 57
for i in range(N):
    pg.exec("INSERT INTO stats_t VALUES (%d, 'row')" % i)
b = pg.stats()
d = b - a
ins = [r for r in d.statements if r["query"].startswith("INSERT INTO stats_t")]
assert.eq(len(ins), 1)
assert.eq(ins[0]["calls"], N)
assert.eq(ins[0]["rows"], N)
assert.true(ins[0]["wal_bytes"] > 0)
assert.true(d.wal_bytes > 0)
assert.true(d.calls >= N)
assert.true(d.delta)
assert.true(d.database["tup_inserted"] >= 0)  # flushed lazily by PostgreSQL (up to seconds)
assert.true(d.cpu_us_backends > 0)
assert.fails(lambda: d - a, "subtract snapshots")
# pg_stats compare by content (issue 33): two deltas of the same snapshots
# are equal, a delta is not its snapshot, two snapshots apart are unequal.
assert.eq(b - a, d)
assert.ne(d, b)
assert.ne(a, b)
plan = pg.explain("SELECT count(*) FROM stats_t", analyze = False)
assert.eq(plan.execution_ms, None)
`)
	d, ok := g["d"].(*statsValue)
	if !ok {
		t.Fatalf("d is %T", g["d"])
	}
	data, err := codec.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, moduleSet.Decoders())
	if err != nil || back.String() != d.String() {
		t.Fatalf("stats round trip: %v, %v vs %v", err, back, d)
	}
	if eq, err := starlark.Equal(back, d); !eq || err != nil {
		t.Errorf("pg_stats read back from the cache != the one stored (%v)", err)
	}
	if h := d.HTML(); !strings.Contains(h, "INSERT INTO stats_t") || strings.Contains(h, "<pg_stats") {
		t.Fatalf("HTML: %s", h)
	}
	plan, err := codec.Encode(g["plan"])
	if err != nil {
		t.Fatal(err)
	}
	if p, err := codec.Decode(plan, moduleSet.Decoders()); err != nil || p.String() != g["plan"].String() {
		t.Fatalf("plan round trip: %v", err)
	}
}

// TestObservePerRequest drives a known workload from a connection of its
// own (as workload.sql would) and checks the per-request figures.
func TestObservePerRequest(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(shared.dsnString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE obs_t (id int, v text)"); err != nil {
		t.Fatal(err)
	}
	stop, err := shared.StartObserving(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	deadline := time.Now().Add(500 * time.Millisecond)
	for i := 0; i < n || time.Now().Before(deadline); i++ {
		if i >= n {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if _, err := conn.Exec(ctx, "INSERT INTO obs_t VALUES ($1, 'some text')", i); err != nil {
			t.Fatal(err)
		}
	}
	f, err := stop(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures: %v", f)
	within := func(k string, lo, hi float64) {
		if v, ok := f[k]; !ok || v < lo || v > hi {
			t.Errorf("%s = %v (present %v), want within [%v, %v]", k, v, ok, lo, hi)
		}
	}
	within("statements_per_req", 1, 1)
	within("db_cpu_us_per_req", 1, 50_000)
	within("db_cpu_us_bg_per_req", 0, 50_000)
	within("buffers_per_req", 1, 100)
	within("wal_bytes_per_req", 50, 10_000)
	within("plan_exec_ms_per_req", 0.0001, 50)
	within("wait_samples", 2, 100)
	within("walwrite_waiters_max", 0, 1)
	if u := runattrs.Unknown(runattrs.Names(f)); len(u) > 0 {
		t.Errorf("figures the table of run attributes (and the reference) does not list: %v", u)
	}
}

func TestAttachRedactsPassword(t *testing.T) {
	dsn := strings.Replace(shared.dsnString(), "postgres@", "postgres:s3cret@", 1)
	g := mustRun(t, `
other = backend.postgres(dsn = "`+dsn+`")
assert.eq(other.query("SELECT 1 AS one")[0]["one"], 1)
assert.true("s3cret" not in other.dsn)
assert.true("s3cret" not in str(other))
assert.fails(lambda: other.snapshot("x"), "attached by dsn")
`)
	other := g["other"].(*Handle)
	if s := other.String(); strings.Contains(s, "s3cret") {
		t.Fatal(s)
	}
	conn, err := other.conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if pid := other.serverPID(context.Background(), conn); pid != shared.postmasterPID() {
		t.Fatalf("attached server's postmaster found as %d, want %d", pid, shared.postmasterPID())
	}
	_, err = run(t, `backend.postgres(dsn = "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2")`)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error %v", err)
	}
}

func TestMissingBinaryMessage(t *testing.T) {
	_, err := lookBin("no-such-pg-program")
	if err == nil || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Fatalf("error %v", err)
	}
}

// TestPortTakenBeforeTheBind: another server binds the port a start picked
// before the postmaster does (here the shared cluster's, a real server).
// The new postmaster cannot bind it; the start must not take the other
// server's answer for its own, and ends on another port, with a DSN that
// reaches this cluster's data dir and leaves the other server alone.
func TestPortTakenBeforeTheBind(t *testing.T) {
	cache := t.TempDir()
	taken := 0
	testHookPortPicked = func(c *cluster) {
		if strings.HasPrefix(c.root, cache+"/") && taken == 0 {
			c.port, taken = shared.c.port, shared.c.port
		}
	}
	t.Cleanup(func() { testHookPortPicked = nil })
	g, err := startest.Exec(t, startest.Options{CacheDir: cache, Modules: modules,
		Cell: &runtime.Cell{Name: "port_taken"}}, `
pg = backend.postgres()
dir = pg.query("SHOW data_directory")[0]["data_directory"]
`)
	if err != nil {
		t.Fatal(startest.Describe(err))
	}
	if taken == 0 {
		t.Fatal("the hook never gave the new cluster the shared cluster's port")
	}
	h := g["pg"].(*Handle)
	if got, want := string(g["dir"].(starlark.String)), h.c.dataDir(); got != want {
		t.Errorf("the new cluster's DSN reaches data dir %s, want its own %s", got, want)
	}
	if h.c.port == taken {
		t.Errorf("the new cluster kept port %d, which the shared cluster holds", taken)
	}
	var dir string
	if err := shared.pool.QueryRow(context.Background(), "SHOW data_directory").Scan(&dir); err != nil || dir != shared.c.dataDir() {
		t.Errorf("the shared cluster answers %q, %v; want its data dir %s", dir, err, shared.c.dataDir())
	}
}

// TestSocketDirFallback: a cluster whose root is too deep for a socket path
// gets a short private directory under /tmp, removed when it stops.
func TestSocketDirFallback(t *testing.T) {
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	for _, root := range []string{t.TempDir(), deep} {
		c := &cluster{root: root}
		dir, err := c.socketDir()
		if err != nil {
			t.Fatal(err)
		}
		c.sockDir = dir
		inside := strings.HasPrefix(dir, root+"/")
		if inside != (root != deep) || len(dir)+len("/.s.PGSQL.65535") > 107 {
			t.Errorf("root %d bytes: socket dir %s", len(root), dir)
		}
		c.dropSocketDir()
		if _, err := os.Stat(dir); (err == nil) != inside {
			t.Errorf("after stop, socket dir %s exists: %v (want only inside the root)", dir, err == nil)
		}
	}
}

// TestObserveWithoutStatements: pg_stat_statements unreadable at the end of
// a window (here dropped from the observed database) leaves out the
// figures taken from it and says why, rather than 0 buffers per request;
// the others stay.
func TestObserveWithoutStatements(t *testing.T) {
	ctx := context.Background()
	admin, err := shared.conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	db := "obs_nostat_" + strconv.FormatInt(time.Now().UnixNano(), 10) // the shared cluster outlives a -count=2 run's first pass
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	dsn := strings.Replace(shared.dsnString(), "/postgres?", "/"+db+"?", 1)
	if dsn == shared.dsnString() {
		t.Fatalf("no database name to replace in %s", dsn)
	}
	other := mustRun(t, `pg = backend.postgres(dsn = "`+dsn+`")`)["pg"].(*Handle)
	stop, err := other.StartObserving(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 1000); DROP EXTENSION pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	f, err := stop(10)
	if err == nil || !strings.Contains(err.Error(), "pg_stat_statements") {
		t.Errorf("stop: %v, want the pg_stat_statements failure", err)
	}
	for _, k := range []string{"buffers_per_req", "statements_per_req", "plan_exec_ms_per_req", "buffers"} {
		if v, ok := f[k]; ok {
			t.Errorf("%s = %v from a window pg_stat_statements did not cover", k, v)
		}
	}
	if _, ok := f["wal_bytes_per_req"]; !ok {
		t.Errorf("the figures not from pg_stat_statements went too: %v", f)
	}
}
