package backend

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
	setMark()
	if _, err := h.pool.Exec(ctx, "SELECT count(*) FROM moved_t"); err != nil {
		t.Fatal(err)
	}
	if h.moved() {
		t.Errorf("a SELECT counted as a change")
	}
	setMark()
	before := h.currentLSN()
	if _, err := h.pool.Exec(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	if h.currentLSN() == before {
		t.Fatalf("CHECKPOINT did not move the WAL insert position: the next check proves nothing")
	}
	if h.moved() {
		t.Errorf("a checkpoint counted as a change")
	}
	setMark()
	if _, err := h.pool.Exec(ctx, "INSERT INTO moved_t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if !h.moved() {
		t.Errorf("an INSERT was not seen as a change")
	}
}

func TestReadOnly(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1": true, " select * from t": true, "SHOW work_mem": true, "EXPLAIN SELECT 1": true,
		"EXPLAIN ANALYZE INSERT INTO t VALUES (1)": false, "INSERT INTO t VALUES (1) RETURNING id": false,
		"SELECT nextval('s')": false, "SELECT * INTO t2 FROM t": false, "WITH x AS (DELETE FROM t RETURNING *) SELECT 1": false,
	} {
		if got := readOnly(sql); got != want {
			t.Errorf("readOnly(%q) = %v, want %v", sql, got, want)
		}
	}
}
