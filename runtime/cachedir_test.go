package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEntryPathTakenByADirectoryIsRepaired: a directory where a cell's
// cache entry belongs made every run recompute the cell and warn "is a
// directory", for ever. The run that meets it now replaces the directory
// with the entry, and the next run is a hit with no warning.
func TestEntryPathTakenByADirectoryIsRepaired(t *testing.T) {
	dir := t.TempDir()
	src := "# %% a\nx = 1\n"
	runNotebook(t, dir, src, Options{})
	entries, _ := filepath.Glob(filepath.Join(DefaultCacheDir(filepath.Join(dir, "nb.star")), "*", "entries", "*", "*"))
	if len(entries) != 1 {
		t.Fatalf("entries: %v", entries)
	}
	os.Remove(entries[0])
	if err := os.MkdirAll(filepath.Join(entries[0], "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runNotebook(t, dir, src, Options{})
	if st := r.e.CellRun("a"); st.Status != StatusRan || strings.Contains(r.stderr.String(), "not cached") {
		t.Errorf("the run that meets the directory: %s\n%s", st.Status, r.stderr.String())
	}
	if fi, err := os.Lstat(entries[0]); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the entry path after the run: %v, %v", fi, err)
	}
	r = runNotebook(t, dir, src, Options{})
	if st := r.e.CellRun("a"); st.Status != StatusHit || strings.Contains(r.stderr.String(), "warning") {
		t.Errorf("the next run: %s\n%s", st.Status, r.stderr.String())
	}
}
