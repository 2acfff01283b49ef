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
	d, err := dir(Module + "/runtime/testsupport/srcdir/srcdir.go")
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
