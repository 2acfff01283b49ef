package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSmokeRun derives the tables from the committed smoke run and checks
// them against the raw files read independently of the parsers: every run
// with a known rate appears with it, rounds alternate who goes first, the
// run is labelled as a smoke run, and no table claims a quiet box.
func TestSmokeRun(t *testing.T) {
	dirs, _ := filepath.Glob("../raw/*-smoke")
	if len(dirs) == 0 {
		t.Skip("no smoke run committed")
	}
	set, err := readRaw(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	out := render(set)
	for _, want := range []string{"SMOKE run", "wrk first", "benchbook first", "pgbench scale 1 (100000 accounts)", "a busy box"} {
		if !strings.Contains(out, want) {
			t.Errorf("tables lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(strings.ToLower(out), "quiet") {
		t.Errorf("tables call a run quiet:\n%s", out)
	}
	for _, m := range set.runs {
		if m.section == "hot" {
			continue
		}
		if m.rps != m.rps { // NaN: a parser missed the rate
			t.Errorf("%s: no rate parsed from:\n%s", m.file, m.body)
			continue
		}
		if !strings.Contains(out, "| "+num(m.rps, 0)) {
			t.Errorf("%s: rate %s not in the tables", m.file, num(m.rps, 0))
		}
	}
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]float64{"1.28ms": 1.28, "850us": 0.85, "41.162µs": 0.041162, "2.176s": 2176, "950ns": 0.00095} {
		if got := durationMs(in); got < want*0.999999 || got > want*1.000001 {
			t.Errorf("%s: %g ms, want %g", in, got, want)
		}
	}
}
