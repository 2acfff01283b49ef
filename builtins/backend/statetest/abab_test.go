package statetest

import (
	"os"
	"path/filepath"
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

// targetNB measures what a target process says, in an abab cell whose
// runs name the server cell's handle.
const targetNB = `# %% server
srv = backend.process(["./srvbin"], cwd = ".", ready = "log:^version")

# %% runs
load("@std/abab.star", "abab")
exp = abab(arms = {"A": None, "B": None}, pairs = 2, run = lambda arm: srv.logs(tail = 1))
[exp.runs[a][p] for p in range(2) for a in ["A", "B"]]
`

// TestABABCheckpointsSeeTheTarget: after the target's binary changed, the
// server cell and the abab cell ran again, and the abab cell returned the
// old binary's runs from its checkpoints (issue 47, item 1): a checkpoint
// named the server cell by its key, not the binary it started. A warm run
// must show what a fresh run shows.
func TestABABCheckpointsSeeTheTarget(t *testing.T) {
	t.Parallel()
	warm := t.TempDir()
	cache := filepath.Join(warm, "cache")
	for i, version := range []string{"1", "2", "1"} {
		srvbin := "#!/bin/sh\necho version " + version + "\nexec sleep 600\n"
		fresh := t.TempDir()
		for _, dir := range []string{warm, fresh} {
			if err := os.WriteFile(filepath.Join(dir, "srvbin"), []byte(srvbin), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		want := RunNB(t, fresh, filepath.Join(fresh, "cache"), targetNB, nil, true)
		got := RunNB(t, warm, cache, targetNB, nil, true)
		if got.Outputs["runs"] != want.Outputs["runs"] || !strings.Contains(want.Outputs["runs"], "version "+version) {
			t.Fatalf("step %d (version %s): runs shows %q (%s), a fresh run %q\n%s", i, version, got.Outputs["runs"], got.Why["runs"], want.Outputs["runs"], got.Stderr)
		}
	}
}
