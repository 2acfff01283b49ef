package statetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// shareNB: data creates a one-page table, upd rewrites its one row in
// place, so the table's file keeps its size (8 kB) with other bytes.
const shareNB = `# %% cluster
pg = backend.postgres()

# %% data
pg.exec("CREATE TABLE t (id int, v int)")
pg.exec("INSERT INTO t VALUES (1, 1)")
f = pg.query("SELECT pg_relation_filepath('t') AS f")[0]["f"]
f

# %% upd
pg.exec("UPDATE t SET v = %d")

# %% read
pg.query("SELECT v FROM t")[0]["v"]
`

// TestSnapshotsShareUnchangedFiles: a snapshot hard-links the files the
// snapshot of the state it derives from holds unchanged, and copies the
// rest. The oracle is the files' bytes: the table file upd rewrote (same
// size, other bytes) is its own file in each snapshot, never a link,
// while most of the ~1,000 files of a cluster are shared; and a restore of
// data's state after upd gives back v = 1 (upd edited to v + 2: read
// shows 3).
func TestSnapshotsShareUnchangedFiles(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	src := strings.Replace(shareNB, "%d", "2", 1)
	r := RunNB(t, dir, cache, src, nil, true)
	if r.Outputs["read"] != "2" {
		t.Fatalf("read shows %q\n%s", r.Outputs["read"], r.Stderr)
	}
	rel := strings.Trim(r.Outputs["data"], `"`)
	states, _ := filepath.Glob(filepath.Join(cache, "resources", "*", "postgres", "states", "*"))
	var with []string // the snapshots that hold the table: data's and upd's
	for _, s := range states {
		if _, err := os.Stat(filepath.Join(s, rel)); err == nil {
			with = append(with, s)
		}
	}
	if len(states) != 3 || len(with) != 2 {
		t.Fatalf("snapshots %v, %v of them hold %s; want 3 and 2", states, with, rel)
	}
	a, b := filepath.Join(with[0], rel), filepath.Join(with[1], rel)
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if len(da) != len(db) || bytes.Equal(da, db) {
		t.Fatalf("the table's file in the two snapshots: %d and %d bytes, equal %v; want the same size, other bytes", len(da), len(db), bytes.Equal(da, db))
	}
	if inode(t, a) == inode(t, b) {
		t.Errorf("the table's file, rewritten by upd, is one file in both snapshots")
	}
	for _, s := range with {
		files, shared := 0, 0
		filepath.Walk(s, func(p string, fi os.FileInfo, err error) error {
			if err != nil || !fi.Mode().IsRegular() {
				return err
			}
			files++
			if fi.Sys().(*syscall.Stat_t).Nlink > 1 {
				shared++
			}
			return nil
		})
		t.Logf("%s: %d of %d files shared with another snapshot", filepath.Base(s), shared, files)
		if files < 500 || shared*10 < files*8 {
			t.Errorf("%s: %d of %d files shared; want most", filepath.Base(s), shared, files)
		}
	}
	// upd edited: it runs on data's state, restored from its snapshot.
	r = RunNB(t, dir, cache, strings.Replace(shareNB, "%d", "v + 2", 1), nil, true)
	if r.Outputs["read"] != "3" || !strings.Contains(r.Stderr, "restored from its snapshot") {
		t.Errorf("after data's state was restored, upd's v + 2 reads %q, want 3\n%s", r.Outputs["read"], r.Stderr)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
