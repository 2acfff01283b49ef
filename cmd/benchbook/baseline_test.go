package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// baselineNB writes a notebook whose comparison is bound to a name and not
// displayed (the last statement is an assignment), plus a displayed one.
func baselineNB(t *testing.T, path, after string) {
	t.Helper()
	src := "# %% params\nclients = param(\"clients\", 8)\n\n" +
		"# %% cmp\nrps = compare([100, 101, 99, 100], [" + after + "], metric = \"rps\", better = \"higher\")\nn = clients\n\n" +
		"# %% shown\ncompare([10, 11, 10, 9], [5, 6, 5, 4], metric = \"p99_ms\", better = \"lower\")\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBaselineGatesNamedComparisons: a comparison that is only bound to a
// name is gated (before issue 13 only displayed ones were, so this
// regression passed with exit 0), and every comparison gets a line.
func TestBaselineGatesNamedComparisons(t *testing.T) {
	dir := t.TempDir()
	nb, base := filepath.Join(dir, "nb.star"), filepath.Join(dir, "base.json")
	baselineNB(t, nb, "120, 121, 119, 120")
	if code, _, stderr := runCLI(t, "run", "-format", "json", "-o", base, nb); code != 0 {
		t.Fatalf("baseline run: %d\n%s", code, stderr)
	}
	baselineNB(t, nb, "100, 102, 101, 100") // rps -16 %
	code, _, stderr := runCLI(t, "run", "-baseline", base, nb)
	if code != 1 || !strings.Contains(stderr, "gate cmp/rps: rps") || !strings.Contains(stderr, "REGRESSION") {
		t.Fatalf("named regression: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "gate shown/p99_ms: p99_ms") || !strings.Contains(stderr, "1 of 2 regression gates failed") {
		t.Errorf("the displayed comparison is not gated beside the named one:\n%s", stderr)
	}
}

// TestBaselineNothingGated: a baseline with no comparison in common fails
// and says so (before: exit 0 and silence).
func TestBaselineNothingGated(t *testing.T) {
	dir := t.TempDir()
	other, base := filepath.Join(dir, "other.star"), filepath.Join(dir, "base.json")
	os.WriteFile(other, []byte("# %% elsewhere\nx = compare([1, 2], [3, 4])\n"), 0o644)
	if code, _, stderr := runCLI(t, "run", "-format", "json", "-o", base, other); code != 0 {
		t.Fatalf("baseline run: %d\n%s", code, stderr)
	}
	nb := filepath.Join(dir, "nb.star")
	baselineNB(t, nb, "120, 121, 119, 120")
	code, _, stderr := runCLI(t, "run", "-baseline", base, nb)
	if code != 1 || !strings.Contains(stderr, "nothing could be gated") {
		t.Fatalf("nothing in common: exit %d\n%s", code, stderr)
	}
	for _, id := range []string{"not gated cmp/rps: rps (not in the baseline)", "not gated shown/p99_ms"} {
		if !strings.Contains(stderr, id) {
			t.Errorf("stderr lacks %q:\n%s", id, stderr)
		}
	}
}

// TestBaselineParamMismatch: a baseline run with other -p values is
// refused unless -allow-param-mismatch, which gates with a warning.
func TestBaselineParamMismatch(t *testing.T) {
	dir := t.TempDir()
	nb, base := filepath.Join(dir, "nb.star"), filepath.Join(dir, "base.json")
	baselineNB(t, nb, "120, 121, 119, 120")
	if code, _, stderr := runCLI(t, "run", "-p", "clients=16", "-format", "json", "-o", base, nb); code != 0 {
		t.Fatalf("baseline run: %d\n%s", code, stderr)
	}
	code, _, stderr := runCLI(t, "run", "-p", "clients=8", "-baseline", base, nb)
	if code != 2 || !strings.Contains(stderr, "ran with other parameters (clients=16 vs 8)") {
		t.Fatalf("param mismatch: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "run", "-p", "clients=8", "-baseline", base, "-allow-param-mismatch", nb)
	if code != 0 || !strings.Contains(stderr, "gated anyway") || !strings.Contains(stderr, "gate cmp/rps") {
		t.Fatalf("allowed param mismatch: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", "-p", "clients=16", "-baseline", base, nb); code != 0 || strings.Contains(stderr, "other parameters") {
		t.Fatalf("same parameters: exit %d\n%s", code, stderr)
	}
}
