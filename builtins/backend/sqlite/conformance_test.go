package sqlite

import (
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Kind{
		Name:    "sqlite",
		Handle:  (*Handle)(nil),
		Modules: modules,
		Start:   `h = backend.sqlite("data.db")`,
		Seed: `h.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
h.exec("INSERT INTO t VALUES (1, 'a'), (2, 'b')")`,
		Read:  `h.query("SELECT group_concat(id || v, ',') AS s FROM t")[0]["s"]`,
		Write: `h.exec("INSERT INTO t VALUES (3, 'c')")`,
		// Another connection to the file, as a target process's would be.
		WriteAround: `backend.sqlite("data.db").exec("UPDATE t SET v = 'z' WHERE id = 1")`,
	})
}
