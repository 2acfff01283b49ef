package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyNotebookFolderHintsAtO: with -cache-dir elsewhere, a
// notebook in a folder the user cannot write runs its cells, then failed
// writing the record with "permission denied" and nothing more. The
// error now says to write the record elsewhere with -o, and a rerun with
// -o finds every cell cached. As root, the run is made as nobody (root
// writes anywhere).
func TestReadOnlyNotebookFolderHintsAtO(t *testing.T) {
	top, err := os.MkdirTemp("", "readonly-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	nbDir, cache, out := filepath.Join(top, "nb"), filepath.Join(top, "cache"), filepath.Join(top, "out")
	for _, d := range []string{nbDir, cache, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	nb := filepath.Join(nbDir, "nb.star")
	if err := os.WriteFile(nb, []byte("# %% a\nx = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, append([]string{"run", "-no-color", "-cache-dir", cache}, args...)...)
		if os.Geteuid() == 0 {
			for _, d := range []string{top, filepath.Dir(binary)} {
				os.Chmod(d, 0o755)
			}
			os.Chmod(cache, 0o777)
			os.Chmod(out, 0o777)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		} else {
			os.Chmod(nbDir, 0o555)
			defer os.Chmod(nbDir, 0o755)
		}
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	stderr, err := run(nb)
	if err == nil || !strings.Contains(stderr, "permission denied") || !strings.Contains(stderr, "-o PATH") || !strings.Contains(stderr, nbDir) {
		t.Fatalf("err %v:\n%s", err, stderr)
	}
	stderr, err = run("-o", filepath.Join(out, "nb.html"), nb)
	if err != nil || !strings.Contains(stderr, "hit     a") {
		t.Fatalf("with -o: %v\n%s", err, stderr)
	}
}
