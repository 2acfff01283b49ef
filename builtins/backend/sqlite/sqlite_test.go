package sqlite

import "testing"

func TestSQLite(t *testing.T) {
	mustRun(t, `
db = backend.sqlite(":memory:")
db.exec("CREATE TABLE t (id INTEGER, v TEXT)")
assert.eq(db.exec("INSERT INTO t VALUES (?, ?), (?, ?)", 1, "a", 2, "b"), 2)
rows = db.query("SELECT id, v FROM t ORDER BY id")
assert.eq(len(rows), 2)
assert.eq(rows[1]["v"], "b")
`)
}
