package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchbook convert takes the quickstart to .ipynb and back unchanged, and
// never replaces an existing file (whose outputs would be lost) unless told.
func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	star, src := copyQuickstart(t, dir)
	if code, _, stderr := runCLI(t, "convert", star); code != 0 {
		t.Fatalf("convert to ipynb: exit %d\n%s", code, stderr)
	}
	nb := filepath.Join(dir, "quickstart.ipynb")
	back := filepath.Join(dir, "back.star")
	if code, _, stderr := runCLI(t, "convert", "-to", "star", "-o", back, nb); code != 0 {
		t.Fatalf("convert to star: exit %d\n%s", code, stderr)
	}
	got, _ := os.ReadFile(back)
	if string(got) != string(src) {
		t.Fatalf("the round trip changed the quickstart:\n%s", got)
	}
	code, _, stderr := runCLI(t, "convert", star)
	if code != 1 || !strings.Contains(stderr, "exists") {
		t.Fatalf("converting over an existing ipynb: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "convert", "-force", star); code != 0 {
		t.Fatalf("-force: exit %d\n%s", code, stderr)
	}
	if code, _, _ := runCLI(t, "convert", "-to", "pdf", star); code != 2 {
		t.Fatalf("-to pdf: exit %d, want the usage error's 2", code)
	}
}

// copyQuickstart copies notebooks/quickstart.star into dir.
func copyQuickstart(t *testing.T, dir string) (path string, src []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "notebooks", "quickstart.star"))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "quickstart.star")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, src
}
