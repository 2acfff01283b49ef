package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuickstart runs notebooks/quickstart.star end to end with short runs
// (the real demo target as a child process, ABAB, compare, charts,
// verdict), checks the record in a browser at 1280 px (no page error, 3
// charts, no bar under 2 px: TestRecordsReadableAt1280's check), and that
// a second run is all cache hits.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end notebook run")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "quickstart.html")
	args := []string{"run", "-cache-dir", filepath.Join(dir, "cache"), "-o", out,
		"-p", "duration=1s", "-p", "pairs=2", "-p", "rows=4000", "-p", "clients=4",
		"../../notebooks/quickstart.star"}
	code, _, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"ran     runs", "ran     decision", "live    targets"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Verdict", "IMPROVES", "<svg", "Provenance"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("record lacks %q", want)
		}
	}
	readableAt1280(t, "quickstart", string(page), 3) // TestRecordsReadableAt1280's quickstart case
	code, _, stderr = runCLI(t, args...)
	if code != 0 || !strings.Contains(stderr, "6 hit, 1 live") {
		t.Errorf("second run: exit %d, want all hits:\n%s", code, stderr)
	}
}
