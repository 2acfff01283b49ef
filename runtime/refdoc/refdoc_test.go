package refdoc

import (
	"strings"
	"testing"

	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/stdlib"
)

const page = "# m: a module\n\nIntro.\n\n```python\nintro_example()\n```\n\n" +
	"## m.f, m.g\n\n```\nm.f(x, y = 1) -> int\n    more\n```\n\nWhat f does.\n\n```python needs=postgres,docker\nm.f(1)\n```\n\n" +
	"```python fragment\nm.f(x)\n```\n\n```sh\nnot python\n```\n\n" +
	"## Not an entry\n\n````\n## not a heading\n````\n\n" +
	"## h\n\nno signature\n\n```\nh()\n```\n"

// TestParseFindsEntriesSignaturesAndExamples: headings that name builtins
// are entries (the later names aliases), the first code block without a
// language is the signature (a later one is not), python blocks are
// examples with their marks and the page's own line numbers, and a "##"
// inside a fence is code.
func TestParseFindsEntriesSignaturesAndExamples(t *testing.T) {
	p, err := Parse("m", page)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "m: a module" || !strings.Contains(p.Intro, "intro_example()") {
		t.Errorf("title %q, intro %q", p.Title, p.Intro)
	}
	if len(p.Sections) != 3 {
		t.Fatalf("%d sections, want 3: %+v", len(p.Sections), p.Sections)
	}
	f := p.Entry("m.g")
	if f == nil || f != p.Entry("m.f") || f.Signature != "m.f(x, y = 1) -> int\n    more\n" || f.Synopsis() != "m.f(x, y = 1) -> int" {
		t.Fatalf("m.g's entry: %+v", f)
	}
	if len(f.Examples) != 2 || f.Examples[0].Code != "m.f(1)\n" || strings.Join(f.Examples[0].Needs, "+") != "postgres+docker" || !f.Examples[1].Fragment {
		t.Errorf("m.f's examples: %+v", f.Examples)
	}
	if l := strings.Split(page, "\n")[f.Examples[0].Line-1]; l != "m.f(1)" {
		t.Errorf("example line %d is %q, want its first line", f.Examples[0].Line, l)
	}
	if p.Sections[1].Names != nil || !strings.Contains(p.Sections[1].Body, "## not a heading") {
		t.Errorf("prose section: %+v", p.Sections[1])
	}
	if h := p.Entry("h"); h == nil || h.Signature != "h()\n" {
		t.Errorf("h: %+v", h)
	}
	if n := len(p.Examples()); n != 3 {
		t.Errorf("%d examples in the page, want 3", n)
	}
	if b := Blocks("1. item\n\n   ```python\n   x = 1\n     y\n   ```\n"); len(b) != 1 || b[0].Code != "x = 1\n  y\n" {
		t.Errorf("a block in a list item keeps its indent: %+v", b)
	}
	if p.Entry("nope") != nil {
		t.Error("an entry for a name no heading names")
	}
}

// TestStdlibPagesComeFromTheirSource: a stdlib module's page is its
// docstring, each exported def an entry whose signature is its def line
// (defaults as written), private defs none.
func TestStdlibPagesComeFromTheirSource(t *testing.T) {
	src, err := stdlib.FS.ReadFile("soak.star")
	if err != nil {
		t.Fatal(err)
	}
	p, err := FromStarlark("@std/soak.star", src, &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Title, "@std/soak.star") {
		t.Errorf("title %q", p.Title)
	}
	soak := p.Entry("soak")
	if soak == nil || !strings.HasPrefix(soak.Signature, `soak(run, duration = "70m", window = "1m", checks = [], `) {
		t.Fatalf("soak: %+v", soak)
	}
	if mh := p.Entry("median_halves"); mh == nil || !strings.Contains(mh.Body, "second half's median") {
		t.Errorf("median_halves has not its docstring: %+v", mh)
	}
	if p.Entry("_seconds") != nil {
		t.Error("a private def has an entry")
	}
}
