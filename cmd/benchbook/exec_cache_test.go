package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestExecStringCommandCaches: a string command runs through /bin/sh; a
// second run of an unchanged notebook must be a hit, not "input changed:
// binary /bin/sh" every time.
func TestExecStringCommandCaches(t *testing.T) {
	nb := writeNB(t, "# %% bench\nr = workload.exec(\"echo hi > /dev/null\", runs = 2, warmup = 0)\n")
	if code, _, stderr := runCLI(t, "run", nb); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	code, _, stderr := runCLI(t, "run", nb)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^\s*hit\s+bench\b`).MatchString(stderr) || strings.Contains(stderr, "input changed") {
		t.Errorf("second run of an unchanged exec cell is not a hit:\n%s", stderr)
	}
}
