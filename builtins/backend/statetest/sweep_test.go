package statetest

import (
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// A sweep grid that grows measures only its new cells, and every cell
// starts from the state sweep was called in (a cell's leftover table is
// gone before the next cell).
const sweepNB = `# %% params
ks = param("ks", "1,2")

# %% cluster
pg = backend.postgres()

# %% runs
load("@std/sweep.star", "sweep")

def _one(k):
    before = pg.query("SELECT count(*) AS n FROM pg_tables WHERE tablename LIKE 'left%'")[0]["n"]
    pg.exec("CREATE TABLE left_%d (id int)" % k)
    return {"before": before, "at": pg.query("SELECT clock_timestamp()::text AS at")[0]["at"]}

grid = sweep(grid = {"k": [int(k) for k in ks.split(",")]}, run = _one)
["%d:%d:%s" % (r["k"], r["before"], r["at"]) for r in grid.rows]
`

func TestSweepGrowsAndRestores(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	cache := dir + "/cache"
	r1 := RunNB(t, dir, cache, sweepNB, nil, true)
	r2 := RunNB(t, dir, cache, sweepNB, map[string]string{"ks": "1,2,3"}, true)
	one, two := r1.Outputs["runs"], r2.Outputs["runs"]
	if strings.Count(one, ":0:") != 2 || strings.Count(two, ":0:") != 3 {
		t.Fatalf("a sweep cell saw another's table (want before = 0 everywhere):\n%s\n%s\n%s", one, two, r2.Stderr)
	}
	if !strings.HasPrefix(two, strings.TrimSuffix(one, "]")) {
		t.Fatalf("the grown grid re-measured its first cells:\n%s\n%s", one, two)
	}
}
