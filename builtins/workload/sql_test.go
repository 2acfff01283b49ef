package workload

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
)

// startPostgres starts a throwaway cluster (pgtest) and returns its DSN.
func startPostgres(t *testing.T) string {
	t.Helper()
	return pgtest.Start(t, pgtest.Options{}).DSN
}

func TestSQL(t *testing.T) {
	t.Parallel()
	dsn := startPostgres(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(context.Background(), `CREATE TABLE kv (k int PRIMARY KEY, v int NOT NULL);
		INSERT INTO kv SELECT g, 0 FROM generate_series(1, 1000) g`)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	handle := starlarkstruct.FromStringDict(starlark.String("pg"), starlark.StringDict{"dsn": starlark.String(dsn)})
	mustExec(t, `
r = workload.sql(dsn, query = "SELECT v FROM kv WHERE k = $1", args = gen, clients = 4, duration = "1s", warmup = "200ms")
assert.eq(r.kind, "sql")
assert.eq(r.errors, {})
assert.true(r.count > 50)
assert.eq(r.by_statement["SELECT"].count, r.count)
assert.eq(r.acquire.count, 0)  # each client acquired its connection once, in warmup
assert.true(r.p(99) > 0)
c = workload.sql(dsn, query = "SELECT v FROM kv WHERE k = $1", args = [3], clients = 3, duration = "300ms", warmup = 0)
assert.eq(c.acquire.count, 3)
assert.true(c.count > 3)
w = workload.sql(pg, queries = {"read": "SELECT v FROM kv WHERE k = $1", "write": "UPDATE kv SET v = v + 1 WHERE k = $1"},
                 args = [7], rate = 100, duration = "1s", warmup = 0)
assert.eq(w.errors, {})
assert.eq(sorted(w.by_statement.keys()), ["read", "write"])
assert.true(w.count >= 95)
l = workload.sql(dsn, query = "SELECT v FROM kv WHERE k = $1", args = lambda seq: [seq % 1000 + 1], rate = 200, duration = "500ms", warmup = 0)
assert.eq(l.errors, {})
assert.true(l.count >= 95)
assert.true(not any(["Starlark" in w for w in l.warnings]))  # 200 cheap calls a second
d = workload.sql(dsn, query = "SELECT $1::date + 1", args = lambda seq: ["2025-06-01"], clients = 1, duration = "200ms", warmup = 0)
assert.eq(d.errors, {})
e = workload.sql(dsn, query = "SELECT 1/0", clients = 1, duration = "300ms", warmup = 0)
assert.true(e.errors["sqlstate 22012"] > 0)
assert.eq(e.count, 0)
assert.fails(lambda: workload.sql(dsn, query = "SELECT 1", args = "x", clients = 1, duration = "1s"), "args must be")
assert.fails(lambda: workload.sql(dsn, query = "SELEC v FROM kv", clients = 1, duration = "1s"), 'SELEC statement "SELEC v FROM kv": ERROR: syntax error')
assert.fails(lambda: workload.sql(dsn, queries = {"r": "SELECT v FROM nope"}, rate = 10, duration = "1s"), 'r statement .*relation "nope" does not exist')
`, starlark.StringDict{"dsn": starlark.String(dsn), "pg": handle,
		"gen": goFunc{func(i int64) []any { return []any{i%1000 + 1} }}})
	check, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close(context.Background())
	var v int
	if err := check.QueryRow(context.Background(), "SELECT v FROM kv WHERE k = 7").Scan(&v); err != nil || v < 95 {
		t.Errorf("the write statement ran %d times (err %v), want >= 95", v, err)
	}
}

func TestExec(t *testing.T) {
	mustExec(t, `
r = workload.exec("true", runs = 3, warmup = 1)
assert.eq(r.kind, "exec")
assert.eq(r.count, 3)
assert.eq(len(r.wall_ms), 3)
assert.eq(len(r.cpu_ms), 3)
assert.true(all([kb > 0 for kb in r.max_rss_kb]))
assert.true(r.p(50) > 0)
f = workload.exec(["sh", "-c", "exit 3"], runs = 2, warmup = 0)
assert.eq(f.errors, {"exit 3": 2})
s = workload.exec("sleep 5", runs = 1, warmup = 0, timeout = "200ms")
assert.eq(s.errors, {"timeout": 1})
`, nil)
}

// TestSQLInterruptBreaksStatementInFlight: statements run without a context
// watch, so Ctrl-C must still end a long statement at once.
func TestSQLInterruptBreaksStatementInFlight(t *testing.T) {
	t.Parallel()
	dsn := startPostgres(t)
	for _, loop := range []string{"clients = 2", "rate = 50, max_inflight = 8"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(1500*time.Millisecond, cancel) // when every worker is in a 20 s sleep
		start := time.Now()
		g, err := execStar(t, ctx, `r = workload.sql(dsn, query = "SELECT pg_sleep($1)", args = lambda seq: [0.05 if seq < 10 else 20.0], `+loop+`, duration = "30s", warmup = 0, timeout = "25s")`,
			starlark.StringDict{"dsn": starlark.String(dsn)})
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("%s: Ctrl-C took %s to end the run", loop, el)
		}
		r := g["r"].(*Run)
		if !r.Interrupted() || r.d.Count == 0 || sumErrors(r.d.Errors) != 0 {
			t.Errorf("%s: interrupted=%v count=%d errors=%v", loop, r.Interrupted(), r.d.Count, r.d.Errors)
		}
	}
}
