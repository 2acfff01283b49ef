package demotarget

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // pure Go: the demo needs only Go
)

// dataVersion names the schema and generator; a change builds new files.
const dataVersion = "v1"

// vocabulary is the number of distinct search tokens; with 200k rows each
// token matches ~100 items, so a search without the index scans every row
// and with it reads ~20 index entries.
const vocabulary = 2000

// dbPath is where the database for rows (and index) lives, shared by every
// demo started on this machine so it is built once.
func dbPath(dir string, rows int, index bool) string {
	name := fmt.Sprintf("items-%s-%d", dataVersion, rows)
	if index {
		name += "-index"
	}
	return filepath.Join(dir, name+".db")
}

// ensureDB builds the database at path unless it exists. It writes to a
// temporary file and renames it, so concurrent builders never see a half
// file.
func ensureDB(path string, rows int, index bool) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("demo: data dir: %w", err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	defer os.Remove(tmp)
	if err := buildDB(tmp, rows, index); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

func buildDB(path string, rows int, index bool) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return fmt.Errorf("demo: open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stmts := []string{
		"PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF",
		"CREATE TABLE items (id INTEGER PRIMARY KEY, token TEXT NOT NULL, category INTEGER NOT NULL, score INTEGER NOT NULL, title TEXT NOT NULL)",
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("demo: %s: %w", s, err)
		}
	}
	if err := fillItems(db, rows); err != nil {
		return err
	}
	if index {
		// Covering: the search reads token, score and title from the index alone.
		if _, err := db.Exec("CREATE INDEX items_token_score ON items (token, score DESC, title)"); err != nil {
			return fmt.Errorf("demo: create index: %w", err)
		}
	}
	_, err = db.Exec("ANALYZE")
	return err
}

// fillItems inserts deterministic rows: SQLite generates them from
// multiplicative hashes of the row number, which is several times faster
// than inserting from Go and needs no seed to stay reproducible.
func fillItems(db *sql.DB, rows int) error {
	q := `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
INSERT INTO items (id, token, category, score, title)
SELECT x, printf('t%04d', (x * 2654435761 % 4294967291) % ?), (x * 40503 % 65521) % 20,
       x * 69069 % 1000003, printf('item %d about t%04d', x, (x * 2654435761 % 4294967291) % ?)
FROM n`
	if _, err := db.Exec(q, rows, vocabulary, vocabulary); err != nil {
		return fmt.Errorf("demo: fill items: %w", err)
	}
	return nil
}

// Token returns the i-th search token ("t0000" .. "t1999"); notebooks use
// it to make queries that hit.
func Token(i int) string { return fmt.Sprintf("t%04d", i%vocabulary) }
