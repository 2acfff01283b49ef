package srcdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCallerFindsThisFile: under -trimpath or not, the directory holds
// this very file, checked against the file system.
func TestCallerFindsThisFile(t *testing.T) {
	d, err := Caller()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "srcdir_test.go")); err != nil {
		t.Errorf("Caller() = %s, which does not hold srcdir_test.go: %v", d, err)
	}
}

// TestTrimmedName: a -trimpath name resolves under the module root; a
// name from another module is an error, not a guess.
func TestTrimmedName(t *testing.T) {
	d, err := dir(module + "/runtime/testsupport/srcdir/srcdir.go")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if d != wd {
		t.Errorf("dir = %s, want %s", d, wd)
	}
	if d, err := dir("example.com/other/x.go"); err == nil {
		t.Errorf("dir of another module's file = %s, want an error", d)
	}
}

// TestRootReadsTheModuleDirective: go.mod's module directive is found
// after comments and blank lines, quoted or not; a go.mod without one, or
// naming another module, is no root of this module.
func TestRootReadsTheModuleDirective(t *testing.T) {
	for src, ours := range map[string]bool{
		"module github.com/benchbook/benchbook\n\ngo 1.23\n":                  true,
		"// a comment\n\nmodule \"github.com/benchbook/benchbook\" // ours\n": true,
		"go 1.23\nrequire x v1.0.0\n":                                         false,
		"modulex github.com/benchbook/benchbook\n":                            false,
	} {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Chdir(d)
		got, err := root()
		if ours && (err != nil || got != d) || !ours && err == nil {
			t.Errorf("go.mod %q: root() = %q, %v", src, got, err)
		}
	}
}
