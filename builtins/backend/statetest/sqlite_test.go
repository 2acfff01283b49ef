package statetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/stdlib"
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

// TestSQLiteChangedOutsideInOneSession: in one session (the REPL, the
// kernel), the file replaced between two runs is seen as at the start of a
// new one; and the cells' own writes between them are not an outside
// change: a run with nothing changed is all hits.
func TestSQLiteChangedOutsideInOneSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	WriteSQLite(t, filepath.Join(dir, "data.db"), 3)
	path := filepath.Join(dir, "nb.star")
	os.WriteFile(path, []byte(outsideNB), 0o644)
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: &stderr, Modules: modules(), Stdlib: stdlib.FS, CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i, step := range []struct {
		rows int // written before the run; 0: none
		want string
		hits bool
	}{{0, "4", false}, {0, "4", true}, {9, "10", false}, {0, "10", true}} {
		if step.rows > 0 {
			WriteSQLite(t, filepath.Join(dir, "data.db"), step.rows)
		}
		e.Run(true)
		st := e.CellRun("measure")
		if got := st.Outputs(); len(got) != 1 || got[0].String() != step.want {
			t.Fatalf("run %d: measure shows %v (%s), want %s\n%s", i, got, st.Why, step.want, stderr.String())
		}
		if hit := st.Status == runtime.StatusHit && e.CellRun("add").Status == runtime.StatusHit; hit != step.hits {
			t.Errorf("run %d: add %s, measure %s (%s); want hits %v", i, e.CellRun("add").Status, st.Status, st.Why, step.hits)
		}
	}
}
