package postgres

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSharedSnapshotEqualsAFullCopy: a snapshot that hard-links what its
// base holds unchanged (saveSnapshot) has, file for file, what cp -a of
// the same stopped data dir has: the same names, bytes, modes, owners and
// times. Between base and snapshot the cluster ran statements that
// rewrite pages in place (an UPDATE of rows, the same file size), add
// files (an index) and write the WAL. A restore of base (restoreSnapshot)
// makes the data dir base again, file for file, with no file linked.
func TestSharedSnapshotEqualsAFullCopy(t *testing.T) {
	g := mustRunOwn(t, `
pg = backend.postgres()
pg.exec("CREATE TABLE t (id int, v int)")
pg.exec("INSERT INTO t SELECT i, i FROM generate_series(1, 2000) i")
`)
	ctx := context.Background()
	c := g["pg"].(*Handle).c
	dir := t.TempDir()
	base, snap, full := filepath.Join(dir, "base"), filepath.Join(dir, "snap"), filepath.Join(dir, "full")
	c.stop()
	if err := saveSnapshot(ctx, c.dataDir(), base, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.start(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.dsn())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"UPDATE t SET v = v + 1 WHERE id % 7 = 0", "CREATE INDEX t_v ON t (v)"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	c.stop()
	if err := saveSnapshot(ctx, c.dataDir(), snap, base); err != nil {
		t.Fatal(err)
	}
	if err := cpA(ctx, c.dataDir(), full); err != nil {
		t.Fatal(err)
	}
	got, want := treeFacts(t, snap), treeFacts(t, full)
	if len(got) != len(want) {
		t.Errorf("the snapshot has %d entries, cp -a %d", len(got), len(want))
	}
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: missing from the snapshot", p)
		} else if g != w {
			t.Errorf("%s: snapshot %s, cp -a %s", p, g, w)
		}
	}
	shared := 0
	for p := range got {
		if fi, err := os.Lstat(filepath.Join(snap, p)); err == nil && fi.Mode().IsRegular() && fi.Sys().(*syscall.Stat_t).Nlink > 1 {
			shared++
		}
	}
	t.Logf("%d of %d entries shared with the base", shared, len(got))
	if shared == 0 || shared == len(got) {
		t.Errorf("%d of %d entries shared: want some, not all", shared, len(got))
	}

	// A restore of base keeps the data dir's files that are base's
	// version and copies the rest: the data dir then is base, file for
	// file, and shares no file with any snapshot (PostgreSQL writes it).
	if err := restoreSnapshot(ctx, base, c.dataDir()); err != nil {
		t.Fatal(err)
	}
	restored, wantBase := treeFacts(t, c.dataDir()), treeFacts(t, base)
	if len(restored) != len(wantBase) {
		t.Errorf("the restored data dir has %d entries, base %d", len(restored), len(wantBase))
	}
	for p, w := range wantBase {
		if g := restored[p]; g != w {
			t.Errorf("restored %s: %q, base %q", p, g, w)
		}
	}
	filepath.Walk(c.dataDir(), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Sys().(*syscall.Stat_t).Nlink != 1 {
			t.Errorf("restored %s has %d links", p, fi.Sys().(*syscall.Stat_t).Nlink)
		}
		return err
	})
	if err := c.start(ctx); err != nil { // the session's cleanup stops it
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, c.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var sum, idx int64
	if err := conn.QueryRow(ctx, "SELECT sum(v - id), (SELECT count(*) FROM pg_indexes WHERE tablename = 't') FROM t").Scan(&sum, &idx); err != nil || sum != 0 || idx != 0 {
		t.Errorf("after the restore: sum(v - id) %d, indexes %d, %v; want 0, 0 (base's rows, no index)", sum, idx, err)
	}
}

// treeFacts maps each path under root to its type, mode, owner, size,
// modification time and a hash of its bytes (or link target).
func treeFacts(t *testing.T, root string) map[string]string {
	t.Helper()
	facts := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		st := fi.Sys().(*syscall.Stat_t)
		f := fmt.Sprintf("%v uid %d gid %d", fi.Mode(), st.Uid, st.Gid)
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f += fmt.Sprintf(" %d bytes %x mtime %d", len(data), sha256.Sum256(data), fi.ModTime().UnixNano())
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			f += " -> " + target
		}
		facts[rel] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return facts
}
