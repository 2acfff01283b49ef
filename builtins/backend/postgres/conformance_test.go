package postgres

import (
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
)

// Each face runs on a cluster of its own, started by the builtin as a
// notebook starts one.
func TestConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, backendtest.Kind{
		Name:    "postgres",
		Handle:  (*Handle)(nil),
		Modules: modules,
		Start:   `h = backend.postgres()`,
		Load:    `workload.sql(h, query = "SELECT 1", clients = 2, duration = "1s", warmup = "0s")`,
		Figure:  "statements",
		Seed:    `h.exec("CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT i, 'v' || i FROM generate_series(1, 50) i")`,
		Read:    `h.query("SELECT md5(string_agg(id || v, ',' ORDER BY id)) AS s FROM t")[0]["s"]`,
		Write:   `h.exec("UPDATE t SET v = 'w' WHERE id = 1")`,
		// A second client on the cluster's DSN (as pgbench would be).
		WriteAround: `backend.postgres(dsn = h.dsn).exec("UPDATE t SET v = 'x' WHERE id = 2")`,
		Secret: `own = backend.postgres()
h = backend.postgres(dsn = own.dsn.replace("postgres@", "postgres:" + WORD + "@"))`,
		Fail: `backend.postgres(dsn = "postgres://u:" + WORD + "@127.0.0.1:1/db?connect_timeout=2")`,
	})
}
