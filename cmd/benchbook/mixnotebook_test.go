package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadWriteMixNotebook runs notebooks/read-write-mix.star end to end
// with short runs: the demo's search/read/like mix in ABAB, a comparison
// per tag, per-tag charts, reads beside likes as concurrent scenarios, and
// the verdict; a second run is all cache hits.
func TestReadWriteMixNotebook(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end notebook run")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "mix.html")
	args := []string{"run", "-cache-dir", filepath.Join(dir, "cache"), "-o", out,
		"-p", "duration=1s", "-p", "pairs=2", "-p", "rows=4000", "-p", "clients=4",
		"../../notebooks/read-write-mix.star"}
	code, _, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"ran     runs", "ran     concurrent", "ran     decision", "reads │ ", "likes │ "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rps[search]", "p99[read]", "p99[like]", `class="run by-tag"`, "latency by tag", "Verdict", "0 mismatches in 7 queries"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("record lacks %q", want)
		}
	}
	if n := strings.Count(string(page), "<svg"); n < 5 {
		t.Errorf("record has %d charts, want 5", n)
	}
	code, _, stderr = runCLI(t, args...)
	if code != 0 || !strings.Contains(stderr, "hit") || strings.Contains(stderr, "ran     runs") {
		t.Errorf("second run: exit %d, want the runs from the cache:\n%s", code, stderr)
	}
}
