// Package srcdir finds a test helper's own source directory, whether or
// not the test binary was built with -trimpath (which .ci/test uses so
// that a fresh clone reuses the Go build cache of the last one).
package srcdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"golang.org/x/mod/modfile"
)

// module is this module's path: what -trimpath leaves at the start of a
// source file's name.
const module = "github.com/benchbook/benchbook"

// Caller is the directory of the source file of the function that calls
// it. A -trimpath build names the file by import path: it is found under
// the module root above the working directory (go test runs a test in
// its package's directory).
func Caller() (string, error) {
	_, file, _, ok := goruntime.Caller(1)
	if !ok {
		return "", errors.New("srcdir: no caller")
	}
	return dir(file)
}

func dir(file string) (string, error) {
	if filepath.IsAbs(file) {
		return filepath.Dir(file), nil
	}
	rel, ok := strings.CutPrefix(file, module+"/")
	if !ok {
		return "", fmt.Errorf("srcdir: %s is not in module %s", file, module)
	}
	root, err := root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(filepath.Dir(rel))), nil
}

// root is the directory of this module's go.mod at or above the working
// directory.
func root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && modfile.ModulePath(data) == module {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("srcdir: no go.mod of %s at or above %s", module, wd)
		}
	}
}
