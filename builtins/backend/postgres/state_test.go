package postgres

import (
	"context"
	"testing"
)

// The change detector: a checkpoint moves the WAL insert position but
// changes nothing; an INSERT does.
func TestMovedSeesWritesNotHousekeeping(t *testing.T) {
	h := shared
	ctx := context.Background()
	mark := func() { h.mu.Lock(); defer h.mu.Unlock(); h.lsn = "" }
	setMark := func() { lsn := h.currentLSN(); mark(); h.mu.Lock(); h.lsn = lsn; h.mu.Unlock() }
	if _, err := h.pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS moved_t (id int)"); err != nil {
		t.Fatal(err)
	}
	// The cluster's own autovacuum (of tables earlier tests wrote) is a
	// change too, and may land in any window: a check that no-change stays
	// quiet passes if one of three tries is quiet, while a SELECT or a
	// checkpoint counted as a change would fail all three.
	quiet := func(what string, do func() error) {
		t.Helper()
		for range 3 {
			setMark()
			if err := do(); err != nil {
				t.Fatal(err)
			}
			if !h.moved() {
				return
			}
		}
		t.Errorf("%s counted as a change, three times", what)
	}
	quiet("a SELECT", func() error {
		_, err := h.pool.Exec(ctx, "SELECT count(*) FROM moved_t")
		return err
	})
	quiet("a checkpoint", func() error {
		before := h.currentLSN()
		if _, err := h.pool.Exec(ctx, "CHECKPOINT"); err != nil {
			return err
		}
		if h.currentLSN() == before {
			t.Fatalf("CHECKPOINT did not move the WAL insert position: the check proves nothing")
		}
		return nil
	})
	setMark()
	if _, err := h.pool.Exec(ctx, "INSERT INTO moved_t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if !h.moved() {
		t.Errorf("an INSERT was not seen as a change")
	}
}
