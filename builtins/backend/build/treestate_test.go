package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTreeStateSeesUntrackedFiles: editing an untracked file whose name
// holds a space changes the tree's hash (it used to be split into two
// names that do not exist, and left out), and a symlink to /dev/zero is
// hashed by its target's name instead of read forever.
func TestTreeStateSeesUntrackedFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.Symlink("/dev/zero", filepath.Join(repo, "zero")); err != nil {
		t.Fatal(err)
	}
	state := func(content string) string {
		if err := os.WriteFile(filepath.Join(repo, "my file.go"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := treeState(context.Background(), repo)
		if err != nil {
			t.Fatal(err)
		}
		return tr.diffHash
	}
	if a, b := state("package a"), state("package b"); a == b {
		t.Errorf("editing an untracked file left the tree's hash at %s", a)
	}
}
