package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/stdlib"
)

var updateDocs = flag.Bool("update", false, "rewrite kernel_docs.go from the builtin packages' doc comments")

// docSources are where the builtins' doc comments are: every package under
// builtins/, and the engine's own builtins in runtime/.
var docSources = []struct {
	dir     string
	recurse bool
}{{"../../builtins", true}, {"../../runtime", false}}

// TestKernelBuiltinDocs: what inspect says of a builtin is the signature
// block its package's doc comment already writes (STYLE.md: a module's doc
// comment lists every Starlark-visible signature), so no doc is written
// twice. kernel_docs.go is generated from those comments; this test fails
// when it differs from them (-update rewrites it) or when a builtin has no
// signature in any doc comment.
func TestKernelBuiltinDocs(t *testing.T) {
	docs := map[string]string{}
	for _, pass := range []bool{true, false} { // package docs first, then the other comments
		for _, src := range docSources {
			collectDocs(t, src.dir, src.recurse, pass, docs)
		}
	}
	for alias, name := range docAliases {
		docs[alias] = docs[name]
	}
	var missing []string
	for _, name := range builtinNames() {
		if docs[name] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("builtins with no signature in a doc comment (write one in the module's doc, as \"//\\tNAME(args) -> result\"): %s", strings.Join(missing, ", "))
	}
	want := docsSource(docs)
	have, _ := os.ReadFile("kernel_docs.go")
	if bytes.Equal(have, want) {
		return
	}
	if *updateDocs {
		if err := os.WriteFile("kernel_docs.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("kernel_docs.go differs from the builtins' doc comments: go test ./cmd/benchbook -run TestKernelBuiltinDocs -update")
}

// docAliases are builtins under a second name, documented under the first.
var docAliases = map[string]string{
	"gocode.load": "gocode.file", // load is a keyword: gocode.load(...) does not parse (gocode.go)
}

// builtinNames lists every builtin function a notebook sees, as its
// Name() says it: "md", "workload.http".
func builtinNames() []string {
	var names []string
	for name, v := range runtime.MustModuleSet(stdlib.FS, modules()...).Globals() {
		switch v := v.(type) {
		case *starlark.Builtin:
			names = append(names, v.Name())
		case *starlarkstruct.Module:
			if name == "json" || name == "math" { // go.starlark.net's own, documented there
				continue
			}
			for _, m := range v.Members {
				if b, ok := m.(*starlark.Builtin); ok {
					names = append(names, b.Name())
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// signatureLine is a doc comment's code line that starts a builtin's
// entry: "\tworkload.http(url, ...". Its entry runs on over the code lines
// indented deeper.
var signatureLine = regexp.MustCompile(`^\t([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)\(`)

func collectDocs(t *testing.T, root string, recurse, packageDocs bool, docs map[string]string) {
	t.Helper()
	known := map[string]bool{}
	for _, n := range builtinNames() {
		known[n] = true
	}
	// A builtin's own doc comment beats a line of some table that lists it
	// (runtime.Core's), whichever file the walk reads first.
	whole, table := map[string]string{}, map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (!recurse || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, cg := range f.Comments {
			if (cg == f.Doc) != packageDocs {
				continue
			}
			text := cg.Text()
			if m := signatureLine.FindStringSubmatch("\t" + text); m != nil && known[m[1]] && whole[m[1]] == "" {
				// A comment that is one builtin's doc: "progress(label) names ..."
				whole[m[1]] = strings.TrimSpace(text)
				continue
			}
			for name, doc := range signatures(text) {
				if known[name] && table[name] == "" {
					table[name] = doc
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]string{whole, table} {
		for name, doc := range m {
			if docs[name] == "" {
				docs[name] = doc
			}
		}
	}
}

// signatures finds the entries of one comment's code blocks.
func signatures(text string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := signatureLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		entry := []string{lines[i][1:]}
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t ") {
			i++
			entry = append(entry, lines[i][1:])
		}
		if _, dup := out[m[1]]; !dup {
			out[m[1]] = strings.Join(entry, "\n")
		}
	}
	return out
}

func docsSource(docs map[string]string) []byte {
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("// Code generated by TestKernelBuiltinDocs from the builtin packages' doc comments; DO NOT EDIT.\n")
	b.WriteString("// go test ./cmd/benchbook -run TestKernelBuiltinDocs -update\n\npackage main\n\n")
	b.WriteString("// builtinDocs is each builtin's signature block as its package's doc\n// comment writes it, for the kernel's inspect.\n")
	b.WriteString("var builtinDocs = map[string]string{\n")
	for _, n := range names {
		fmt.Fprintf(&b, "%q: %q,\n", n, docs[n])
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return src
}
