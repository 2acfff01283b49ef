package statetest

import (
	"testing"
)

// The reproduction on a SQLite file: rows A -> B -> A shows A, B, A, the
// third run restoring A's file from its snapshot; and a cell that deletes
// rows after the measurement does not leak into the next run's data cell.
const sqliteNB = `# %% params
rows = param("rows", 20)

# %% db
db = backend.sqlite("data.db")

# %% data
db.exec("CREATE TABLE t (id int)")
db.exec("INSERT INTO t WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d) SELECT i FROM s" % rows)

# %% measure
db.query("SELECT count(*) AS n FROM t")[0]["n"]

# %% cleanup
db.exec("DELETE FROM t")
`

func TestSQLiteRowsABA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := dir + "/cache"
	for i, rows := range []string{"", "10", "", "10"} {
		params, want := map[string]string{}, "20"
		if rows != "" {
			params["rows"], want = rows, rows
		}
		r := RunNB(t, dir, cache, sqliteNB, params, true)
		if r.Outputs["measure"] != want {
			t.Fatalf("step %d: measure shows %q, want %s\n%s", i, r.Outputs["measure"], want, r.Stderr)
		}
		if i >= 2 && r.Status["data"] != "hit" {
			t.Errorf("step %d: data %s (%s), want a hit from its snapshot", i, r.Status["data"], r.Why["data"])
		}
	}
}
