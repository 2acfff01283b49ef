package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLastParamsAndIndex: after a run with -p, cells, render and index show
// that run (not the defaults), and the decision table's bar stays short
// however large the gain.
func TestLastParamsAndIndex(t *testing.T) {
	nb := writeNB(t, `# %% [markdown]
# # Does the new path serve more?
# Hypothesis: it skips a copy.

# %% params
base = param("base", 10)

# %% compare
c = compare([base * 1.0, base + 1.0, base + 0.5], [300.0, 310.0, 290.0], metric = "rps", better = "higher")

# %% decision
verdict(status = "kept", headline = c, summary = "the new path")
`)
	dir := filepath.Dir(nb)
	if code, _, stderr := runCLI(t, "run", "-p", "base=12", nb); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	code, out, stderr := runCLI(t, "cells", nb)
	if code != 0 || !strings.Contains(stderr, "last run's parameters: -p base=12") || regexp.MustCompile(`(?m)^(params|compare|decision)\s+\d+\s+(stale|never)`).MatchString(out) {
		t.Errorf("cells after run -p: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := runCLI(t, "render", nb); code != 0 || !strings.Contains(stderr, "3 hit") {
		t.Errorf("render after run -p: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "index", dir); code != 0 {
		t.Fatalf("index: exit %d\n%s", code, stderr)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	row := regexp.MustCompile(`(?m)^\| \[nb\.star\].*$`).FindString(string(table))
	if !strings.Contains(row, "Does the new path serve more?") || !strings.Contains(row, "| kept |") || !strings.Contains(row, "IMPROVES") {
		t.Errorf("index row: %q", row)
	}
	if n := strings.Count(row, "█"); n != 30 || !strings.Contains(row, "▶") {
		t.Errorf("a gain of ~2,500 %% should be 30 blocks and ▶, got %d blocks: %q", n, row)
	}
}
