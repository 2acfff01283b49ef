package statetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/internal/needs"
)

// The reproduction: a data cell fills a table from a parameter, a
// measuring cell reads it. rows = A, then B, then A again must show A, B, A;
// the third run finds A's state in its snapshot without refilling.
const reproNB = `# %% params
rows = param("rows", 200)

# %% cluster
pg = backend.postgres()

# %% data
pg.exec("CREATE TABLE t (id int PRIMARY KEY)")
pg.exec("INSERT INTO t SELECT generate_series(1, %d)" % rows)

# %% measure
n = pg.query("SELECT count(*) AS n FROM t")[0]["n"]
n
`

func TestReproRowsABA(t *testing.T) {
	needs.Postgres(t)
	dir := t.TempDir()
	cache := dir + "/cache"
	steps := []struct {
		rows       string
		dataStatus string
	}{
		{"", "ran"},
		{"100", "ran"},
		{"", "hit"}, // A's state is still in its snapshot: no refill
		{"100", "hit"},
	}
	for i, s := range steps {
		params := map[string]string{}
		want := "200"
		if s.rows != "" {
			params["rows"], want = s.rows, s.rows
		}
		r := runNB(t, dir, cache, reproNB, params, true)
		if r.outputs["measure"] != want {
			t.Fatalf("step %d (rows=%s): measure shows %q, want %s\n%s", i, want, r.outputs["measure"], want, r.stderr)
		}
		if r.status["data"] != s.dataStatus {
			t.Errorf("step %d: data is %s (%s), want %s", i, r.status["data"], r.why["data"], s.dataStatus)
		}
		// The record from the cache alone says the same.
		rr := runNB(t, dir, cache, reproNB, params, false)
		if rr.outputs["measure"] != want || rr.status["measure"] != "hit" {
			t.Fatalf("step %d: render shows measure %q (%s), want %s hit\n%v\n%s", i, rr.outputs["measure"], rr.status["measure"], want, rr.why, rr.stderr)
		}
		fmt.Println(strings.TrimSpace(r.stderr))
	}
}
