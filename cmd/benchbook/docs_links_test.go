package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// TestDocsLinksResolve: every relative link and image in the docs names a
// file of the repository, and its #fragment a heading of that file (as
// GitHub makes anchors); absolute links are not fetched.
func TestDocsLinksResolve(t *testing.T) {
	for _, file := range docFiles(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, dest := range links(src) {
			u, err := url.Parse(dest)
			if err != nil || u.Scheme != "" || strings.HasPrefix(dest, "//") {
				continue
			}
			target := file
			if u.Path != "" {
				target = filepath.Join(filepath.Dir(file), u.Path)
			}
			info, err := os.Stat(target)
			if err != nil {
				t.Errorf("%s: link %s: %s does not exist", strings.TrimPrefix(file, "../../"), dest, strings.TrimPrefix(target, "../../"))
				continue
			}
			if u.Fragment == "" || info.IsDir() {
				continue
			}
			data, _ := os.ReadFile(target)
			if !headingAnchors(data)[u.Fragment] {
				t.Errorf("%s: link %s: %s has no heading #%s", strings.TrimPrefix(file, "../../"), dest, strings.TrimPrefix(target, "../../"), u.Fragment)
			}
		}
	}
}

// links are the destinations of a Markdown text's links and images.
func links(src []byte) []string {
	var out []string
	doc := termMarkdown.Parser().Parse(text.NewReader(src))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			out = append(out, string(n.Destination))
		case *ast.Image:
			out = append(out, string(n.Destination))
		}
		return ast.WalkContinue, nil
	})
	return out
}

// headingAnchors are the fragments GitHub gives a Markdown text's headings.
func headingAnchors(src []byte) map[string]bool {
	out := map[string]bool{}
	doc := termMarkdown.Parser().Parse(text.NewReader(src))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			a := anchor(string(h.Text(src)))
			for i := 0; out[a]; i++ { // a second "Errors" is errors-1
				a = anchor(string(h.Text(src))) + "-" + strconv.Itoa(i+1)
			}
			out[a] = true
		}
		return ast.WalkContinue, nil
	})
	return out
}
