package statetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/stdlib"
)

// The REPL goes through the same rules: a change typed at the prompt leaves
// the cluster in a state no cell recorded, so a cell run afterwards restores
// its own state first instead of measuring the leftover.
func TestREPLChangeIsNotALeftover(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.star")
	os.WriteFile(path, []byte(reproNB), 0o644)
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: &stderr, Modules: modules(), Stdlib: stdlib.FS})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Run(true)
	if _, err := e.Eval(`pg.exec("DELETE FROM t WHERE id > 10")`); err != nil {
		t.Fatal(err)
	}
	out, err := e.Eval(`pg.query("SELECT count(*) AS n FROM t")[0]["n"]`)
	if err != nil || len(out) != 1 || out[0].String() != "10" {
		t.Fatalf("the prompt does not see its own change: %v %v", out, err)
	}
	if err := e.RunCell("measure", runtime.RunForced); err != nil {
		t.Fatal(err)
	}
	if got := e.CellRun("measure").Outputs(); len(got) != 1 || got[0].String() != "200" {
		t.Fatalf("measure after a change at the prompt shows %v, want 200 (the data cell's state)\n%s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), "changed at the prompt") || !strings.Contains(stderr.String(), "restored from its snapshot") {
		t.Errorf("the progress lines do not say what happened:\n%s", stderr.String())
	}
}
