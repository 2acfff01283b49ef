package postgres

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestGuardPostgres runs on a cluster of its own: a backend killed with
// SIGKILL crashes the cluster (the postmaster restarts every backend); one
// ended by pg_terminate_backend does not; an ERROR is a warning.
func TestGuardPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	t.Parallel()
	mustRunOwn(t, `
db = backend.postgres()
victim = db.query("SELECT pg_backend_pid() AS pid")[0]["pid"]

# An ERROR in the log: a warning, the run stays valid.
r1 = workload.sql(db, query = "SELECT 1 / (random() * 0)::int", clients = 1, duration = "1s", warmup = "0s", observe = [db])
assert.eq(r1.valid, True)
assert.eq([t.kind for t in r1.trips if t.source == "postgres"], ["log_errors"])
logged = [t for t in r1.trips if t.source == "postgres"][0].evidence
assert.true("ERROR" in logged and "division by zero" in logged, logged)
# The server's log against the client's count, across the wire: each
# failed request of the window is one ERROR line, give or take the one in
# flight at either end. A log read from later than the window's opening
# (it was, by a connection's time, and at load by all of a 1 s run) falls
# short by the requests it missed.
failed = 0
for n in r1.errors.values():
    failed += n
assert.true(failed > 0, r1.errors)
assert.true(abs(int(logged.split(" ")[0]) - failed) <= 2, (logged, r1.errors))
r1b = workload.sql(db, query = "SELECT 1 / (random() * 0)::int", clients = 1, duration = "0.5s", warmup = "0s",
                   observe = [db.watch(allow = ["division by zero", "SELECT 1 /"])])
assert.eq([t for t in r1b.trips if t.source == "postgres"], [])

# pg_terminate_backend is no crash: FATAL lines warn, the run is valid.
r2 = workload.sql(db, query = "SELECT CASE WHEN random() < 0.01 THEN pg_terminate_backend(pg_backend_pid()) END",
                  clients = 2, duration = "1s", warmup = "0s", observe = [db])
assert.true(r2.valid, r2.invalid_reason)

# kill -9 of a backend mid-run crashes the cluster: the run is invalid.
killer = backend.process(["sh", "-c", "sleep 1.5; kill -9 %d; sleep 30" % victim])
r3 = workload.sql(db, query = "SELECT 1", clients = 2, duration = "4s", warmup = "0s", observe = [db])
killer.stop()
assert.eq(r3.valid, False)
kinds = [t.kind for t in r3.trips if t.fatal]
assert.true("crashed_backend" in kinds, kinds)
assert.true("terminated by signal 9" in r3.invalid_reason, r3.invalid_reason)

# Unobserved, the cluster the run sends its traffic to is watched all the
# same (issue 33: observe was what turned the guard on).
victim = db.query("SELECT pg_backend_pid() AS pid")[0]["pid"]
killer = backend.process(["sh", "-c", "sleep 1.5; kill -9 %d; sleep 30" % victim])
r4 = workload.sql(db, query = "SELECT 1", clients = 2, duration = "4s", warmup = "0s")
killer.stop()
assert.eq(r4.valid, False)
assert.true("crashed_backend" in [t.kind for t in r4.trips if t.fatal], r4.trips)
`)
}

func TestFingerprint(t *testing.T) {
	mustRun(t, `
pg.exec("DROP TABLE IF EXISTS fp_a, fp_b, fp_c, fp_d")
pg.exec("CREATE TABLE fp_a (id int, v text); INSERT INTO fp_a SELECT i, 'v' || i FROM generate_series(1, 500) i")
pg.exec("CREATE TABLE fp_b (id int, v text); INSERT INTO fp_b SELECT i, 'v' || i FROM generate_series(500, 1, -1) i")
pg.exec("CREATE TABLE fp_c (id int, v text); INSERT INTO fp_c SELECT i, 'v' || i FROM generate_series(1, 500) i; UPDATE fp_c SET v = 'x' WHERE id = 250")
pg.exec("CREATE TABLE fp_d (id bigint, v text); INSERT INTO fp_d SELECT i, 'v' || i FROM generate_series(1, 500) i")
fp = pg.fingerprint(tables = ["fp_a", "fp_b", "fp_c", "fp_d"])
assert.eq(fp["fp_a"].rows, 500)
assert.eq(fp["fp_a"], fp["fp_b"])
assert.ne(fp["fp_a"].hash, fp["fp_c"].hash)
assert.eq(fp["fp_a"].rows, fp["fp_c"].rows)
assert.ne(fp["fp_a"].hash, fp["fp_d"].hash)
assert.fails(lambda: pg.fingerprint(tables = ["no_such_table"]), "no_such_table")
`)
}

// TestQueryRightAfterABackendCrash: a backend killed with SIGKILL makes the
// postmaster end every backend and replay the WAL; the handle's next query
// (a user's next cell) waits that out and answers, instead of failing on
// the connections the crash broke or on "the database system is in
// recovery mode" (57P03), as TestGuardPostgres did on a loaded machine.
// The query comes once the postmaster has ended every backend: before
// that it may still hand a connection out.
func TestQueryRightAfterABackendCrash(t *testing.T) {
	t.Parallel()
	g := mustRunOwn(t, `
db = backend.postgres()
db.exec("CREATE TABLE crash_t (id int); INSERT INTO crash_t SELECT generate_series(1, 10)")
victim = db.query("SELECT pg_backend_pid() AS pid")[0]["pid"]
`)
	db := g["db"].(*Handle)
	victim, _ := g["victim"].(starlark.Int).Int64()
	if err := syscall.Kill(int(victim), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitLog(t, db.c.logPath(), "all server processes terminated; reinitializing")
	g, err := startest.Exec(t, startest.Options{Modules: modules, Globals: starlark.StringDict{"db": db}},
		`n = db.query("SELECT count(*) AS n FROM crash_t")[0]["n"]`)
	if err != nil {
		t.Fatalf("the query right after the crash: %s", startest.Describe(err))
	}
	if n, _ := g["n"].(starlark.Int).Int64(); n != 10 {
		t.Fatalf("%d rows after the crash, want 10", n)
	}
}

// waitLog waits until the file at path holds line.
func waitLog(t *testing.T, path, line string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), line) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %s after 30 s:\n%s", line, path, data)
		}
	}
}
