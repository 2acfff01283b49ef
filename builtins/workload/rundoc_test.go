package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"testing"
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
