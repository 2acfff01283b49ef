package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// TestNew: every template makes a notebook that parses and analyses; the
// http one runs as written (against the embedded demo) to a verdict.
func TestNew(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	web, pg, ctr := filepath.Join(dir, "cache-study.star"), filepath.Join(dir, "pg_study.star"), filepath.Join(dir, "image_study.star")
	if code, out, stderr := runCLI(t, "new", web); code != 0 || !strings.Contains(out, "wrote "+web) {
		t.Fatalf("new: exit %d\n%s%s", code, out, stderr)
	}
	src, _ := os.ReadFile(web)
	if !strings.Contains(string(src), "# # cache study: does B") || strings.Contains(string(src), "{{") {
		t.Errorf("title or placeholders not filled in:\n%.300s", src)
	}
	if code, _, stderr := runCLI(t, "new", web); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("new over an existing file: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "new", "-template", "mongo", filepath.Join(dir, "m.star")); code != 2 || !strings.Contains(stderr, "have capacity, container, http, postgres") {
		t.Errorf("unknown template: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "new", "-template", "postgres", pg); code != 0 {
		t.Fatalf("new -template postgres: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "new", "-template", "container", ctr); code != 0 {
		t.Fatalf("new -template container: exit %d, %s", code, stderr)
	}
	capNB := filepath.Join(dir, "users_study.star")
	if code, _, stderr := runCLI(t, "new", "-template", "capacity", capNB); code != 0 {
		t.Fatalf("new -template capacity: exit %d, %s", code, stderr)
	}
	for _, nb := range []string{web, pg, ctr, capNB} {
		if code, out, stderr := runCLI(t, "cells", nb); code != 0 || !strings.Contains(out, "decision") {
			t.Errorf("cells %s: exit %d\n%s%s", filepath.Base(nb), code, out, stderr)
		}
	}
	if testing.Short() {
		return
	}
	// Through the built binary, as a user runs it: in process, the demo
	// targets re-execute the race-built test binary, whose unindexed arm
	// served 2 requests a second at load 10 and left runs without any.
	if out := runIn(t, dir, "run", "-no-color", "-p", "duration=1s", "-p", "pairs=2", "-p", "clients=2", web); strings.Contains(out, "warning: line") {
		t.Fatalf("run the new notebook:\n%s", out)
	}
	page, _ := os.ReadFile(strings.TrimSuffix(web, ".star") + ".html")
	if !strings.Contains(string(page), `<table class="decision"><caption>Verdict</caption>`) || strings.Count(string(page), "<svg") < 3 {
		t.Errorf("the new notebook's record lacks its verdict or its 3 charts")
	}
}

// TestPostgresTemplateRuns runs the postgres template as written, short:
// its equivalence cell compares the answers of pg.query() under both arms
// with equivalent() (the new user's pattern, issue 33), and the verdict
// rests on it. Its record is TestRecordsReadableAt1280's postgres case
// (two pairs, for the pairs chart): checked in a browser at 1280 px.
func TestPostgresTemplateRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a PostgreSQL study")
	}
	needs.Postgres(t)
	nb := filepath.Join(t.TempDir(), "pg.star")
	if code, _, stderr := runCLI(t, "new", "-template", "postgres", nb); code != 0 {
		t.Fatalf("new: exit %d, %s", code, stderr)
	}
	code, _, stderr := runCLI(t, "run", "-no-color", "-p", "duration=1s", "-p", "pairs=2", "-p", "rows=20000", "-p", "clients=4", nb)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^  ran\s+equivalence`).MatchString(stderr) {
		t.Errorf("the equivalence cell did not run:\n%s", stderr)
	}
	page, _ := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".html")
	if !strings.Contains(string(page), "0 mismatches in 4 queries") {
		t.Errorf("the record does not show the equivalence check")
	}
	readableAt1280(t, "postgres", string(page), 2) // TestRecordsReadableAt1280's postgres case
}
