package statetest

import (
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// An arm that creates an index must not leave it to the next run, nor to
// the cells after the experiment; raising pairs reuses the measured pairs.
const ababNB = `# %% params
pairs = param("pairs", 2)

# %% cluster
pg = backend.postgres()

# %% data
pg.exec("CREATE TABLE t (id int)")
pg.exec("INSERT INTO t SELECT generate_series(1, 100)")

# %% runs
load("@std/abab.star", "abab")

def _with_index():
    pg.exec("CREATE INDEX t_id ON t (id)")  # fails if an earlier run left it

def _measure(arm):
    n = pg.query("SELECT count(*) AS n FROM pg_indexes WHERE tablename = 't'")[0]["n"]
    at = pg.query("SELECT clock_timestamp()::text AS at")[0]["at"]
    return struct(arm = arm, indexes = n, at = at)

exp = abab(arms = {"A": None, "B": _with_index}, pairs = pairs, run = _measure)
["%s:%d:%s" % (r.arm, r.indexes, r.at) for r in [exp.runs[a][p] for p in range(pairs) for a in ["A", "B"]]]

# %% after
pg.query("SELECT count(*) AS n FROM pg_indexes WHERE tablename = 't'")[0]["n"]
`

func TestABABRestoresAndGrows(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	cache := dir + "/cache"
	r1 := RunNB(t, dir, cache, ababNB, nil, true)
	runs1 := r1.Outputs["runs"]
	if strings.Contains(runs1, "error") || r1.Outputs["after"] != "0" {
		t.Fatalf("first run: runs %q after %q\n%s", runs1, r1.Outputs["after"], r1.Stderr)
	}
	for _, want := range []string{"A:0:", "B:1:"} {
		if strings.Count(runs1, want) != 2 {
			t.Errorf("runs %s: want two %q (each run from the experiment's start state)", runs1, want)
		}
	}
	r2 := RunNB(t, dir, cache, ababNB, map[string]string{"pairs": "3"}, true)
	runs2 := r2.Outputs["runs"]
	prefix := strings.TrimSuffix(runs1, "]")
	if !strings.HasPrefix(runs2, prefix) || strings.Count(runs2, "A:0:") != 3 || strings.Count(runs2, "B:1:") != 3 {
		t.Fatalf("pairs=3 did not reuse the first two pairs:\n 2: %s\n 3: %s\n%s", runs1, runs2, r2.Stderr)
	}
	if r2.Outputs["after"] != "0" {
		t.Errorf("after pairs=3: %q indexes, want 0", r2.Outputs["after"])
	}
}
