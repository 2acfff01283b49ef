// Package statetest tests the state of live resources against a real
// PostgreSQL (issue 12). Its rule: a record is never built from a state that
// no longer holds.
package statetest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend"
	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/stdlib"
)

// modules are what the notebooks see: the backends whose state is tested,
// the workloads and comparisons the notebooks run on them, tables.
func modules() []runtime.Module {
	return []runtime.Module{backend.Module(), display.Module(), host.Module(), metric.Module(), workload.Module(workload.Options{})}
}

// Result is one run of a notebook.
type Result struct {
	Status  map[string]string // cell -> status
	Why     map[string]string
	Outputs map[string]string // cell -> outputs joined, or "error: ..."
	Stderr  string            // the progress lines
}

// RunNB writes src to dir/nb.star and runs it with params against cacheDir.
func RunNB(t *testing.T, dir, cacheDir, src string, params map[string]string, execute bool) Result {
	t.Helper()
	path := filepath.Join(dir, "nb.star")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return run(t, path, runtime.Options{CacheDir: cacheDir, Params: params}, execute)
}

// RerunNB runs dir/nb.star as it stands against cacheDir, executing the
// named cells whether or not they are stale (benchbook run -rerun).
func RerunNB(t *testing.T, dir, cacheDir string, cells ...string) Result {
	t.Helper()
	return run(t, filepath.Join(dir, "nb.star"), runtime.Options{CacheDir: cacheDir, Rerun: cells}, true)
}

func run(t *testing.T, path string, o runtime.Options, execute bool) Result {
	t.Helper()
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var stderr strings.Builder
	o.Stderr, o.Stdlib, o.Modules = &stderr, stdlib.FS, modules()
	e, err := runtime.Open(context.Background(), nb, o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	e.Run(execute)
	e.Close()
	r := Result{Status: map[string]string{}, Why: map[string]string{}, Outputs: map[string]string{}, Stderr: stderr.String()}
	for _, st := range e.CellRuns() {
		name := st.Def.Name
		r.Status[name], r.Why[name] = string(st.Status), st.Why
		var parts []string
		for _, o := range st.Outputs() {
			parts = append(parts, o.String())
		}
		r.Outputs[name] = strings.Join(parts, "|")
		if st.Err != nil {
			r.Outputs[name] = "error: " + st.Err.Error()
		}
	}
	return r
}

// WriteSQLite makes path a SQLite file of table t with n rows (100, 101,
// ...), as a program other than benchbook would (the sqlite3 shell, a
// copy of another file).
func WriteSQLite(t *testing.T, path string, n int) {
	t.Helper()
	os.Remove(path)
	db, err := sql.Open("sqlite", path) // the driver backend.sqlite registers
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (id int)"); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := db.Exec("INSERT INTO t VALUES (?)", 100+i); err != nil {
			t.Fatal(err)
		}
	}
}
