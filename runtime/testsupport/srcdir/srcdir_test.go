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

// TestModulePath: the module directive is found after comments and blank
// lines, quoted or not; a file without one names no module.
func TestModulePath(t *testing.T) {
	for src, want := range map[string]string{
		"module github.com/benchbook/benchbook\n\ngo 1.23\n":                  "github.com/benchbook/benchbook",
		"// a comment\n\nmodule \"github.com/benchbook/benchbook\" // ours\n": "github.com/benchbook/benchbook",
		"go 1.23\nrequire x v1.0.0\n":                                         "",
		"modulex y\n":                                                         "",
	} {
		if got := modulePath([]byte(src)); got != want {
			t.Errorf("modulePath(%q) = %q, want %q", src, got, want)
		}
	}
}
