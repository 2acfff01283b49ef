package kit

import (
	"testing"
)

func TestReadOnly(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1": true, " select * from t": true, "SHOW work_mem": true, "EXPLAIN SELECT 1": true,
		"EXPLAIN ANALYZE INSERT INTO t VALUES (1)": false, "INSERT INTO t VALUES (1) RETURNING id": false,
		"SELECT nextval('s')": false, "SELECT * INTO t2 FROM t": false, "WITH x AS (DELETE FROM t RETURNING *) SELECT 1": false,
	} {
		if got := ReadOnly(sql); got != want {
			t.Errorf("ReadOnly(%q) = %v, want %v", sql, got, want)
		}
	}
}
