package statetest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
)

// A data dir changed while benchbook was not running (a server started on
// it by hand) is seen by its last checkpoint having moved: benchbook warns
// and restores the state a cell needs before running it.
func TestOutsideChangeIsDetected(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	if r := RunNB(t, dir, cache, reproNB, nil, true); r.Outputs["measure"] != "200" {
		t.Fatalf("first run: %q", r.Outputs["measure"])
	}
	roots, _ := filepath.Glob(filepath.Join(cache, "resources", "cluster-*", "postgres"))
	if len(roots) != 1 {
		t.Fatalf("cluster dir: %v", roots)
	}
	byHand(t, filepath.Join(roots[0], "data"), "DELETE FROM t WHERE id > 10")

	r := RerunNB(t, dir, cache, "measure")
	if r.Outputs["measure"] != "200" {
		t.Fatalf("measure after an outside change shows %q, want 200\n%s", r.Outputs["measure"], r.Stderr)
	}
	if !strings.Contains(r.Stderr, "changed outside benchbook") {
		t.Errorf("no warning about the outside change:\n%s", r.Stderr)
	}
}

// TestOutsideChangeAfterImmediateStop: an UPDATE made by hand on a server
// then stopped with -m immediate (or that crashed) leaves no shutdown
// checkpoint; the next run must see it all the same, and show what a run
// on an empty cache shows. Before, the check compared checkpoints only and
// a rerun cell showed the outside row (FOREIGN) where a fresh run shows v1.
func TestOutsideChangeAfterImmediateStop(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	src := `# %% cluster
pg = backend.postgres()

# %% data
pg.exec("CREATE TABLE kv (k text PRIMARY KEY, v text)")
pg.exec("INSERT INTO kv VALUES ('a', 'v1')")

# %% measure
row = pg.query("SELECT v FROM kv WHERE k = 'a'")[0]["v"]
row
`
	fresh := t.TempDir()
	want := RunNB(t, fresh, filepath.Join(fresh, "cache"), src, nil, true).Outputs["measure"]
	if want != `"v1"` {
		t.Fatalf("fresh run: %q", want)
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	RunNB(t, dir, cache, src, nil, true)
	roots, _ := filepath.Glob(filepath.Join(cache, "resources", "cluster-*", "postgres"))
	if len(roots) != 1 {
		t.Fatalf("cluster dir: %v", roots)
	}
	c := pgtest.Start(t, pgtest.Options{DataDir: filepath.Join(roots[0], "data")})
	c.Exec(t, "UPDATE kv SET v = 'FOREIGN' WHERE k = 'a'")
	c.StopImmediate()

	r := RerunNB(t, dir, cache, "measure")
	if r.Outputs["measure"] != want {
		t.Fatalf("measure after an outside UPDATE and -m immediate shows %q, a fresh run %s\n%s", r.Outputs["measure"], want, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "changed outside benchbook") {
		t.Errorf("no warning about the outside change:\n%s", r.Stderr)
	}
}

// byHand starts PostgreSQL on dataDir as its owner, runs sql and stops it,
// as a user with psql in another terminal would.
func byHand(t *testing.T, dataDir, sql string) {
	t.Helper()
	c := pgtest.Start(t, pgtest.Options{DataDir: dataDir})
	defer c.Stop()
	c.Exec(t, sql)
}
