package main

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceFormattedAndVetted keeps gofmt and go vet in the one test
// command, so an unformatted file or a vet finding fails CI rather than
// landing and being fixed by a later "gofmt" commit.
func TestSourceFormattedAndVetted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet over the module")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gofmt", append([]string{"-l"}, goFiles(t, root)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gofmt: %v\n%s", err, out)
	}
	if files := strings.TrimSpace(string(out)); files != "" {
		t.Errorf("gofmt -l lists files that need formatting (run gofmt -w):\n%s", files)
	}
	vet := exec.Command("go", "vet", "./...")
	vet.Dir = root
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("go vet ./... found problems:\n%s", out)
	}
}

// goFiles lists the module's Go files, leaving out testdata folders (which
// hold deliberately broken Go for the gocode fault tests) and dot folders.
func goFiles(t *testing.T, root string) []string {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
