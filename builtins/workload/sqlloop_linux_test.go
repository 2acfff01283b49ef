package workload

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
	"github.com/jackc/pgx/v5"
	"go.starlark.net/starlark"
)

// TestSQLClosedLoop covers the multiplexed closed loop: scripts of several
// statements, responses larger than the read buffer, server-side errors
// inside a script, timeouts, and connections the server breaks mid-run.
func TestSQLClosedLoop(t *testing.T) {
	dsn := startPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE kv (k int PRIMARY KEY, v int NOT NULL);
		INSERT INTO kv SELECT g, 0 FROM generate_series(1, 100) g`); err != nil {
		t.Fatal(err)
	}
	mustExec(t, `
s = workload.sql(dsn, queries = {"read": "SELECT v FROM kv WHERE k = $1", "write": "UPDATE kv SET v = v + 1 WHERE k = $1"},
                 args = lambda seq: [seq % 100 + 1], clients = 5, duration = "500ms", warmup = "100ms")
assert.eq(s.errors, {})
assert.true(s.count > 20)
assert.eq(s.by_statement["read"].count, s.count)
assert.eq(s.by_statement["write"].count, s.count)
assert.true(s.by_statement["read"].p(50) <= s.p(50))

big = workload.sql(dsn, query = "SELECT repeat('x', $1::int)", args = [300000], clients = 2, duration = "300ms", warmup = 0)
assert.eq(big.errors, {})
assert.true(big.count > 2)

# The second statement fails: the request is an error, and its first
# statement still counts in by_statement; the third never runs.
e = workload.sql(dsn, queries = ["SELECT 1", "SELECT 1/(v - v) FROM kv WHERE k = 1", "SELECT 2"], clients = 2, duration = "300ms", warmup = 0)
assert.eq(e.count, 0)
assert.eq(list(e.errors.keys()), ["sqlstate 22012"])
assert.eq(e.by_statement["SELECT"].count, e.errors["sqlstate 22012"])
assert.eq(e.by_statement["SELECT #3"].count, 0)
`, starlark.StringDict{"dsn": starlark.String(dsn)})

	start := time.Now()
	g := mustExec(t, `to = workload.sql(dsn, query = "SELECT pg_sleep(5)", clients = 3, duration = "700ms", warmup = 0, timeout = "300ms")`,
		starlark.StringDict{"dsn": starlark.String(dsn)})
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("a run of 700ms with a 300ms timeout took %s", el)
	}
	to := g["to"].(*Run)
	if to.d.Count != 0 || to.d.Errors["timeout"] < 3 || len(to.d.Errors) != 1 {
		t.Errorf("statements sleeping past the timeout: count %d, errors %v; want only timeouts", to.d.Count, to.d.Errors)
	}

	// Break the loop's connections mid-run: each client counts one error,
	// acquires a new connection from the pool and goes on. Not at a fixed
	// time: on a loaded box the run was still preparing its statement at
	// 600 ms, and a run whose statement cannot be prepared fails as a whole.
	// So once both clients' connections have run the query, 300 ms on.
	// The test's conn is closed when the test ends: the terminating
	// goroutine must be done by then (the race detector saw Close beside it).
	// The statement sleeps 5 ms so that a backend is terminated while it
	// runs one and says so (57P01) to a client waiting for it. A backend
	// terminated between two statements can close with the next request
	// unread, which resets the connection: the client's write then failed
	// with EPIPE and nothing of the server's message was left to read (both
	// clients counted "reset" in 2 of 32 runs beside two busy loops with the
	// 0.1 ms statement; none in 25 with this one).
	var t0 time.Time // the server's clock: connections opened since are the run's
	if err := conn.QueryRow(ctx, "SELECT now()").Scan(&t0); err != nil {
		t.Fatal(err)
	}
	terminated := make(chan struct{})
	go func() {
		defer close(terminated)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			var n int
			if conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'
				AND pid <> pg_backend_pid() AND backend_start >= $1 AND query = 'SELECT v, pg_sleep(0.005) FROM kv WHERE k = $1'`, t0).Scan(&n) != nil || n < 2 {
				continue
			}
			time.Sleep(300 * time.Millisecond)
			_, _ = conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
			return
		}
	}()
	defer func() { <-terminated }()
	g = mustExec(t, `br = workload.sql(dsn, query = "SELECT v, pg_sleep(0.005) FROM kv WHERE k = $1", args = [1], clients = 2, duration = "1.5s", warmup = 0, window = "500ms")`,
		starlark.StringDict{"dsn": starlark.String(dsn)})
	br := g["br"].(*Run)
	errs := sumErrors(br.d.Errors)
	if errs < 1 || errs > 4 || br.d.Errors["sqlstate 57P01"] < 1 {
		t.Errorf("terminated backends: errors %v, want one or two per client, as 57P01", br.d.Errors)
	}
	if br.acquire.TotalCount() < 3 {
		t.Errorf("acquires %d: the clients did not reconnect", br.acquire.TotalCount())
	}
	last := br.d.Windows[len(br.d.Windows)-1]
	if last.Count == 0 {
		t.Errorf("no requests in the last window after the connections broke: %+v", br.d.Windows)
	}
}

// TestSQLServerGone: a cluster stopped mid-run; its unix socket disappears,
// so reconnects fail as "refused" (at most one attempt per client every
// 10 ms) and the run still ends on time.
func TestSQLServerGone(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t, pgtest.Options{})
	dsn, pg := c.DSN, c.Proc
	time.AfterFunc(600*time.Millisecond, func() { _ = pg.Process.Signal(syscall.SIGQUIT) }) // immediate shutdown
	start := time.Now()
	g := mustExec(t, `r = workload.sql(dsn, query = "SELECT 1", clients = 2, duration = "1.5s", warmup = 0, timeout = "500ms")`,
		starlark.StringDict{"dsn": starlark.String(dsn)})
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("the run took %s", el)
	}
	r := g["r"].(*Run)
	if r.d.Count == 0 || r.d.Errors["refused"] == 0 || r.d.Errors["refused"] > 2*160 || r.d.Errors["other"] != 0 {
		t.Errorf("count %d, errors %v: want successes, then refused reconnects at a bounded rate", r.d.Count, r.d.Errors)
	}
}

// TestSQLOverTLS: a server that speaks TLS (sslmode=require, the managed
// databases' way) gives encrypted connections, whose sockets the event
// loops cannot read raw; closed and open loops then run on workers (pgx
// itself) and count every request, with no error.
func TestSQLOverTLS(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t, pgtest.Options{TLS: true}).DSN
	mustExec(t, `
c = workload.sql(dsn, query = "SELECT 1", clients = 2, duration = "400ms", warmup = 0)
assert.eq(c.errors, {})
assert.true(c.count > 10, c.count)
o = workload.sql(dsn, query = "SELECT 1", rate = 200, duration = "400ms", warmup = 0)
assert.eq(o.errors, {})
assert.eq(o.count, o.intended)
`, starlark.StringDict{"dsn": starlark.String(dsn)})
}
