package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/stdlib"
)

// TestEveryModuleListed: every builtins package that exports a Module
// function is in modules(), and the list merges without a clash. Without
// init() side effects, a module left out of the list is simply missing
// from every notebook: this is what notices.
func TestEveryModuleListed(t *testing.T) {
	if _, err := runtime.NewModuleSet(stdlib.FS, modules()...); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range modules() {
		listed = append(listed, m.Name)
	}
	for _, pkg := range moduleExporters(t, "../../builtins") {
		if !slices.Contains(listed, pkg) {
			t.Errorf("builtins/%s exports Module(), which modules() does not list (it lists %v)", pkg, listed)
		}
	}
}

// moduleExporters are the packages directly under root (builtins/*, one
// module per package) with a top-level func Module, by name.
func moduleExporters(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && filepath.Dir(path) != root {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".go" || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "Module" {
				out = append(out, f.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("found only %v exporting Module: is root right?", out)
	}
	return out
}

// TestStdlibLoadsWithTheModules: every @std module loads with the globals
// the binary's notebooks see, and nothing else.
func TestStdlibLoadsWithTheModules(t *testing.T) {
	env := runtime.MustModuleSet(stdlib.FS, modules()...).Globals()
	entries, err := fs.ReadDir(stdlib.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range entries {
		src, _ := fs.ReadFile(stdlib.FS, ent.Name())
		if _, err := starlark.ExecFileOptions(runtime.FileOptions(), &starlark.Thread{Name: ent.Name()}, ent.Name(), src, env); err != nil {
			t.Errorf("%s: %v", ent.Name(), err)
		}
	}
}
