package workload

import (
	"testing"

	"go.starlark.net/starlark"
)

// TestSQLOpenEventLoop: on Linux the SQL open loop runs on the event loop,
// whose slots acquire a connection when first needed and keep it (the
// workers acquired one per request): 300 requests at most 4 in flight make
// at most 4 acquires. The rate, the account and the per-statement
// histograms hold as before.
func TestSQLOpenEventLoop(t *testing.T) {
	t.Parallel()
	dsn := startPostgres(t)
	mustExec(t, `
r = workload.sql(dsn, query = "SELECT $1::int", args = lambda seq: [seq], rate = 300, max_inflight = 4, duration = "1s", warmup = 0)
assert.eq(r.errors, {})
assert.eq(r.intended, 300)
assert.eq(r.count, 300)
assert.eq(r.by_statement["SELECT"].count, 300)
assert.true(r.acquire.count >= 1 and r.acquire.count <= 4, "acquires: %d" % r.acquire.count)
`, starlark.StringDict{"dsn": starlark.String(dsn)})
}
