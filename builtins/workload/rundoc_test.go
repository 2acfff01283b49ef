package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"testing"

	"github.com/benchbook/benchbook/builtins/internal/runattrs"
)

// The doc comment of Run lists every attribute a run has, so `go doc`
// (and the package doc, which points there) stays true as figures are added.
func TestRunDocListsEveryAttr(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "run.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	ast.Inspect(f, func(n ast.Node) bool {
		if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.TYPE && g.Specs[0].(*ast.TypeSpec).Name.Name == "Run" {
			doc = g.Doc.Text()
		}
		return doc == ""
	})
	if doc == "" {
		t.Fatal("run.go: no doc comment on type Run")
	}
	for _, a := range runAttrs {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(a) + `\b`).MatchString(doc) {
			t.Errorf("the doc of Run does not list the attribute %q", a)
		}
	}
}

// TestRunAttrsAreTheTable: the README's table of run attributes
// (runattrs.Run) and the attributes a run answers to are the same list.
func TestRunAttrsAreTheTable(t *testing.T) {
	table := map[string]bool{}
	for _, a := range runattrs.Run {
		table[a.Name] = true
	}
	have := map[string]bool{}
	for _, a := range runAttrs {
		have[a] = true
		if !table[a] {
			t.Errorf("a run has %q, the table of run attributes does not list it", a)
		}
	}
	for name := range table {
		if !have[name] {
			t.Errorf("the table lists %q, a run has no such attribute", name)
		}
	}
}
