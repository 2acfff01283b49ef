package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// smallTmpfs mounts a tmpfs of size bytes on a new folder, unmounted at
// the end; root only (the tests run as root in CI), else the test skips.
func smallTmpfs(t *testing.T, size string, opts ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	args := []string{"-t", "tmpfs", "-o", strings.Join(append([]string{"size=" + size}, opts...), ","), "tmpfs", dir}
	if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestFullDiskDuringCacheWrite (issue 25): a cell whose entry does not fit
// on the cache's disk is reported ("no space left on device") and kept
// out of the cache; the next run finds no damaged entry, reads the cells
// that fit from the cache and runs the other again. Before, the write's
// error was dropped and a short entry was renamed into place.
func TestFullDiskDuringCacheWrite(t *testing.T) {
	cache := smallTmpfs(t, "256k")
	src := "# %% small\ny = 1\n\n# %% big\nx = \"x\" * (1 << 20)\nlen(x)\n"
	dir := t.TempDir()
	r := runNotebook(t, dir, src, Options{CacheDir: cache})
	if !strings.Contains(r.stderr.String(), "no space left on device") || !strings.Contains(r.stderr.String(), "cell big: not cached") {
		t.Errorf("first run does not say the disk is full:\n%s", r.stderr.String())
	}
	if r.status("big") != StatusRan || r.outputs["big"] != "1048576" {
		t.Errorf("big: %s %q", r.status("big"), r.outputs["big"])
	}
	r = runNotebook(t, dir, "", Options{CacheDir: cache})
	if strings.Contains(r.stderr.String(), "damaged") {
		t.Errorf("a short entry was read back:\n%s", r.stderr.String())
	}
	if r.status("small") != StatusHit || r.status("big") != StatusRan || r.outputs["big"] != "1048576" {
		t.Errorf("second run: small %s, big %s %q\n%s", r.status("small"), r.status("big"), r.outputs["big"], r.stderr.String())
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "v*", "entries", "*", ".tmp-*"))
	if len(entries) > 0 {
		t.Errorf("temp files left: %v", entries)
	}
}

// TestReadOnlyNotebookFolder (issue 25): a notebook on a read-only folder
// fails to open with an error saying where the cache goes and how to put
// it elsewhere; with -cache-dir on a writable folder it runs.
func TestReadOnlyNotebookFolder(t *testing.T) {
	ro := smallTmpfs(t, "1m")
	os.WriteFile(filepath.Join(ro, "nb.star"), []byte("# %% a\nx = 1\nx\n"), 0o644)
	if out, err := exec.Command("mount", "-o", "remount,ro", ro).CombinedOutput(); err != nil {
		t.Skipf("remount ro: %v: %s", err, out)
	}
	nb, err := ParseFile(filepath.Join(ro, "nb.star"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), nb, Options{})
	if err == nil || !strings.Contains(err.Error(), "read-only file system") || !strings.Contains(err.Error(), "-cache-dir") {
		t.Fatalf("open on a read-only folder: %v", err)
	}
	r := runNotebook(t, ro, "", Options{CacheDir: t.TempDir()})
	if r.status("a") != StatusRan || r.outputs["a"] != "1" {
		t.Errorf("with a writable cache: %s %q", r.status("a"), r.outputs["a"])
	}
}
