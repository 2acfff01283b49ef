package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/refdoc"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
	"github.com/benchbook/benchbook/stdlib"
)

func mustReference(t *testing.T) *ref {
	t.Helper()
	r, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// upstream are the modules go.starlark.net documents: their entry lists
// the members rather than one entry each.
var upstream = map[string]bool{"json": true, "math": true}

// builtinNames lists every builtin function a notebook sees, as its Name()
// says it ("md", "workload.http"), and the stdlib's exported names.
func builtinNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for name, v := range runtime.MustModuleSet(stdlib.FS, modules()...).Globals() {
		switch v := v.(type) {
		case *starlark.Builtin:
			names = append(names, v.Name())
		case *starlarkstruct.Module:
			if upstream[name] {
				names = append(names, name)
				continue
			}
			for _, m := range v.Members {
				if b, ok := m.(*starlark.Builtin); ok {
					names = append(names, b.Name())
				}
			}
		default:
			t.Errorf("global %s is a %s: the reference test knows builtins and modules", name, v.Type())
		}
	}
	for _, p := range mustReference(t).pages {
		if strings.HasPrefix(p.Name, "@std/") {
			for _, s := range p.Entries() {
				names = append(names, s.Names[0])
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestEveryBuiltinHasAReferenceEntry: every builtin a notebook sees (every
// module's globals and their members, the stdlib's exported names) has an
// entry with its signature, and is called in an example of its page; no
// entry documents a builtin that does not exist.
func TestEveryBuiltinHasAReferenceEntry(t *testing.T) {
	r := mustReference(t)
	known := map[string]bool{}
	for _, name := range builtinNames(t) {
		known[name] = true
		p, s := r.entry(name)
		if s == nil {
			t.Errorf("%s has no entry in the reference: write a \"## %s\" section with its signature, arguments, errors and an example in its module's reference.md", name, name)
			continue
		}
		if !strings.HasPrefix(s.Signature, name+"(") && !strings.HasPrefix(s.Signature, name+".") && !(s.Names[0] != name && strings.HasPrefix(s.Signature, s.Names[0])) {
			t.Errorf("%s (%s): the signature block does not start with %s(...): %q", name, p.Name, name, s.Synopsis())
		}
		if name != s.Names[0] {
			continue // an alias: the main name's examples stand for it
		}
		called := regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(name) + `[(.]`)
		if !slicesAny(p.Examples(), func(ex refdoc.Example) bool { return called.MatchString(ex.Code) }) {
			t.Errorf("%s (%s): no example on its page calls it", name, p.Name)
		}
	}
	for _, p := range r.pages {
		for _, s := range p.Entries() {
			for _, n := range s.Names {
				if !known[n] {
					t.Errorf("%s documents %s, which no module or stdlib module gives a notebook", p.Name, n)
				}
			}
		}
	}
	for name := range upstream {
		_, s := r.entry(name)
		members := runtime.MustModuleSet(nil).Globals()[name].(*starlarkstruct.Module).Members
		for m := range members {
			if s != nil && !strings.Contains(s.Body, m) {
				t.Errorf("%s's entry does not name its member %s", name, m)
			}
		}
	}
}

func slicesAny[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}

// TestReferencePagesAreGenerated: docs/reference is what benchbook help -md
// writes from the modules' docs, the stdlib and the commands' flags.
func TestReferencePagesAreGenerated(t *testing.T) {
	want, err := referencePages(mustReference(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := "../../docs/reference"
	have, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, path := range have {
		if _, ok := want[filepath.Base(path)]; !ok {
			t.Errorf("%s is no page of the reference any more: go generate ./cmd/benchbook removes it", path)
		}
	}
	for name, text := range want {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(data) != text {
			t.Errorf("docs/reference/%s is not what the modules' docs give: run go generate ./cmd/benchbook", name)
		}
	}
	for _, p := range mustReference(t).pages {
		if src := strings.Fields(sourceOf(p))[0]; !fileExists("../../" + src) {
			t.Errorf("page %s names its source %s, which does not exist", p.Name, src)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// docExample is one example with where it is written.
type docExample struct {
	where string // "docs/reference/workload.md:120"
	refdoc.Example
}

// docsExamples are the examples of the reference pages and of the Markdown
// files of the repository's docs.
func docsExamples(t *testing.T) []docExample {
	var out []docExample
	for _, p := range mustReference(t).pages {
		for _, ex := range p.Examples() {
			// The generated page has two lines more: the note that it is generated.
			out = append(out, docExample{fmt.Sprintf("docs/reference/%s:%d", pageFile(p), ex.Line+2), ex})
		}
	}
	for _, file := range docFiles(t) {
		if strings.HasPrefix(file, "../../docs/reference/") {
			continue // the pages, whose examples are above
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range refdoc.Blocks(string(data)) {
			if b.Lang() == "python" {
				out = append(out, docExample{fmt.Sprintf("%s:%d", strings.TrimPrefix(file, "../../"), b.Line), b.Example()})
			}
		}
	}
	return out
}

// docFiles are the repository's Markdown for users and contributors:
// README.md, CONTRIBUTING.md, and docs/ and below.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../README.md", "../../CONTRIBUTING.md"}
	err := filepath.WalkDir("../../docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocsExamplesRun: every example in the docs parses, and every one that
// is not a fragment runs: a snippet as a cell of a notebook in notebooks/
// (its files beside it), with every module and the stdlib, an error
// written as "# error: MESSAGE" expected on its line; one with "# %%"
// lines as a whole notebook with benchbook run. An example that needs
// PostgreSQL runs where the tests have it; one that needs what the test
// suite cannot give it (a Docker image of yours, a MongoDB server, SSH
// hosts, a Kubernetes cluster) is parsed only.
func TestDocsExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example of the docs")
	}
	for _, ex := range docsExamples(t) {
		t.Run(ex.where, func(t *testing.T) {
			if _, err := runtime.Parse("example.star", []byte(notebookOf(ex.Code))); err != nil {
				t.Fatalf("%s: does not parse: %v", ex.where, err)
			}
			if ex.Fragment {
				return
			}
			for _, need := range ex.Needs {
				switch need {
				case "postgres":
					needs.Postgres(t)
				default:
					t.Skipf("needs %s, which the docs test does not start: parsed only", need)
				}
			}
			t.Parallel()
			dir := notebookCopy(t)
			if strings.Contains(ex.Code, "# %%") {
				runNotebookExample(t, dir, ex)
				return
			}
			src := errorMarks.ReplaceAllStringFunc(ex.Code, func(m string) string {
				msg := errorMarks.FindStringSubmatch(m)[1]
				return fmt.Sprintf("### %q", regexp.QuoteMeta(strings.TrimSpace(msg)))
			})
			startest.RunSource(t, startest.Options{NotebookDir: dir, Modules: modules(), Stdlib: stdlib.FS}, ex.where, src)
		})
	}
}

// errorMarks are the "# error: MESSAGE" comments of an example.
var errorMarks = regexp.MustCompile(`# error: (.*)`)

// notebookOf is an example as a notebook: a snippet becomes one cell.
func notebookOf(code string) string {
	if strings.Contains(code, "# %%") {
		return code
	}
	return "# %% example\n" + code
}

// notebookCopy is a fresh directory holding notebooks/' files, so that an
// example finds zipf_keys.go and may write beside it.
func notebookCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob("../../notebooks/*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // a folder
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runNotebookExample(t *testing.T, dir string, ex docExample) {
	path := filepath.Join(dir, "example.star")
	if err := os.WriteFile(path, []byte(ex.Code), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", "-cache-dir", filepath.Join(dir, "cache"), "-o", filepath.Join(dir, "example.html"), path)
	if code != 0 {
		t.Errorf("%s: benchbook run exited %d:\n%s", ex.where, code, stderr)
	}
}
