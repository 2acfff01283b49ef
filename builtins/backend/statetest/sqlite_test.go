package statetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// outsideNB counts the rows of a SQLite file after a cell adds one: the
// file the cells leave is never the one the user gave.
const outsideNB = `# %% db
db = backend.sqlite("data.db")

# %% add
db.exec("INSERT INTO t VALUES (1)")

# %% measure
db.query("SELECT count(*) AS n FROM t")[0]["n"]
`

// TestSQLiteChangedOutside: the file replaced outside benchbook (3 rows
// by 9, and back) shows in a warm run what a run on an empty cache shows.
// Before, the file's state was the one benchbook first found: the cells
// stayed hits counting the old rows. A file benchbook left as its cells
// left it is no outside change: those cells stay hits.
func TestSQLiteChangedOutside(t *testing.T) {
	t.Parallel()
	warm := t.TempDir()
	cache := filepath.Join(warm, "cache")
	for i, rows := range []int{3, 0, 9, 0, 3} { // 0: the file as the last run left it
		if rows > 0 {
			WriteSQLite(t, filepath.Join(warm, "data.db"), rows)
		} else {
			rows = []int{3, 0, 9, 0, 3}[i-1]
		}
		fresh := t.TempDir()
		WriteSQLite(t, filepath.Join(fresh, "data.db"), rows)
		want := RunNB(t, fresh, filepath.Join(fresh, "cache"), outsideNB, nil, true)
		got := RunNB(t, warm, cache, outsideNB, nil, true)
		if got.Outputs["measure"] != want.Outputs["measure"] || want.Outputs["measure"] != fmt.Sprint(rows+1) {
			t.Fatalf("step %d (%d rows): measure shows %q (%s), a fresh run %q\n%s", i, rows, got.Outputs["measure"], got.Why["measure"], want.Outputs["measure"], got.Stderr)
		}
		if i == 1 || i == 3 {
			if got.Status["measure"] != "hit" || got.Status["add"] != "hit" {
				t.Errorf("step %d, the file as benchbook left it: add %s, measure %s (%s), want hits", i, got.Status["add"], got.Status["measure"], got.Why["measure"])
			}
		}
	}
}

// TestSQLiteOriginalPutBack: the file the cells started from copied back
// over the one they left is the first state again, and the data is in it:
// a cell that runs next on a later state restores that state first.
// Before, benchbook took the file for the later state its cells had left,
// and a rerun measuring cell counted the rows of the file put back.
func TestSQLiteOriginalPutBack(t *testing.T) {
	t.Parallel()
	warm := t.TempDir()
	cache := filepath.Join(warm, "cache")
	WriteSQLite(t, filepath.Join(warm, "data.db"), 3)
	original, err := os.ReadFile(filepath.Join(warm, "data.db"))
	if err != nil {
		t.Fatal(err)
	}
	if r := RunNB(t, warm, cache, outsideNB, nil, true); r.Outputs["measure"] != "4" {
		t.Fatalf("first run: measure %q\n%s", r.Outputs["measure"], r.Stderr)
	}
	if err := os.WriteFile(filepath.Join(warm, "data.db"), original, 0o644); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(outsideNB, "count(*) AS n FROM t", "count(*) AS n FROM t WHERE id > 0", 1)
	if r := RunNB(t, warm, cache, edited, nil, true); r.Outputs["measure"] != "4" || r.Status["measure"] != "ran" {
		t.Errorf("the original put back, measure edited: %s %q, want ran 4 (3 rows and the one add inserts)\n%s", r.Status["measure"], r.Outputs["measure"], r.Stderr)
	}
}
