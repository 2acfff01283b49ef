package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/workload/mongotest"
)

// TestMongoIndexNotebook runs notebooks/mongo-index.star end to end against
// FerretDB with short runs, a password in the URI: the record has the
// server-side figures per request and the equivalence check, never the
// password, and a second run is all cache hits.
func TestMongoIndexNotebook(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end notebook run")
	}
	const pw = "Nb5mOngoPw"
	uri := strings.Replace(mongotest.Start(t), "mongodb://", "mongodb://bench:"+pw+"@", 1) + "bb_index?authMechanism=PLAIN"
	dir := t.TempDir()
	out := filepath.Join(dir, "mongo-index.html")
	args := []string{"run", "-cache-dir", filepath.Join(dir, "cache"), "-o", out,
		"-p", "uri=" + uri, "-p", "duration=1s", "-p", "pairs=1", "-p", "orders=300", "-p", "customers=50", "-p", "clients=2",
		"../../notebooks/mongo-index.star"}
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 mismatches in 5 queries", "mongo_cmd_find_per_req", "mongo_cpu_us_per_req", "docs_per_req", "bench:xxxxx@"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("record lacks %q", want)
		}
	}
	for what, s := range map[string]string{"record": string(page), "stderr": stderr, "stdout": stdout} {
		if strings.Contains(s, pw) {
			t.Errorf("the %s shows the password", what)
		}
	}
	code, _, stderr = runCLI(t, args...)
	if code != 0 || strings.Contains(stderr, " ran ") || !strings.Contains(stderr, "hit") {
		t.Errorf("second run: exit %d, want only hits and live cells:\n%s", code, stderr)
	}
}
