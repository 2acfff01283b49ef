package statetest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
)

// A data dir changed while benchbook was not running (a server started on
// it by hand) is seen by its last checkpoint having moved: benchbook warns
// and restores the state a cell needs before running it.
func TestOutsideChangeIsDetected(t *testing.T) {
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

	path := filepath.Join(dir, "nb.star")
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	e, err := runtime.Open(context.Background(), nb, runtime.Options{CacheDir: cache, Stderr: &stderr, Rerun: []string{"measure"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	e.Close()
	if got := e.CellRun("measure").Outputs(); len(got) != 1 || got[0].String() != "200" {
		t.Fatalf("measure after an outside change shows %v, want 200\n%s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), "changed outside benchbook") {
		t.Errorf("no warning about the outside change:\n%s", stderr.String())
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
