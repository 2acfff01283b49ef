package profile

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
)

// A PostgreSQL cluster's backends, listed from its postmaster: a
// connection opened in the window gets a backend forked then, which perf
// follows from its start, and its sequential scans show under ExecScan.
func TestPerfPostgresBackends(t *testing.T) {
	needPerf(t)
	c := pgtest.Start(t, pgtest.Options{})
	ctx := context.Background()
	setup, err := pgx.Connect(ctx, c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Exec(ctx, "create table t as select g as id, md5(g::text) as v from generate_series(1, 200000) g; analyze t"); err != nil {
		t.Fatal(err)
	}
	setup.Close(ctx)
	rec, err := StartPerf(ctx, Target{Name: "postgres", Lister: ProcessTree(c.Proc.Process.Pid)}, PerfOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "set max_parallel_workers_per_gather = 0"); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		var n int
		if err := conn.QueryRow(ctx, "select count(*) from t where v like '%abc%'").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	backend := int(conn.PgConn().PID())
	p, err := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	fns := functionsByName(p)
	t.Logf("%d samples, pids %v (backend %d), ExecScan %.3f, resolved frames %.3f, %d perf processes", p.Samples, p.PIDs, backend, fns["ExecScan"].Total, p.ResolvedShare(), len(rec.procs))
	if !slices.Contains(p.PIDs, backend) {
		t.Errorf("no samples of the backend forked in the window")
	}
	if fns["ExecScan"].Total < 0.3 {
		t.Errorf("ExecScan %.3f of the samples of four sequential scans", fns["ExecScan"].Total)
	}
	// The backend descends from the postmaster and is followed; a fork in
	// the same 10 ms tick as the start cannot be told apart and gets a
	// perf of its own, whose samples of it Stop drops.
	if len(rec.procs) > 2 {
		t.Errorf("%d perf processes for one new backend", len(rec.procs))
	}
}
