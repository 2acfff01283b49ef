package record

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// TestMarkdownRecordDefusesScriptLinks: the .md record kept
// "[x](javascript:...)" from a Markdown cell or md(), a link that a
// renderer without goldmark's filter (an editor's preview, a static site)
// runs when clicked. Two oracles: the text rendered by a renderer that
// keeps every link (goldmark with html.WithUnsafe) has no href or src
// whose scheme (entities decoded, tabs and newlines dropped, as a browser
// reads it) is not http(s)/mailto; and outside fenced blocks no unescaped
// "[text](" runs into such a scheme. Every case keeps its text, and a safe
// link stays a link.
func TestMarkdownRecordDefusesScriptLinks(t *testing.T) {
	unsafe := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	for _, src := range []string{
		"see [x](javascript:alert(1)) here",
		"see [y](JaVaScRiPt:alert(2)) here",
		"see [z](java&#x73;cript:alert(3)) here",
		"see [t](\tjavascript:alert(3))",
		"see [*em* and `code`](vbscript:msgbox(4)) here",
		"![img](javascript:alert(5))",
		"[r][ref] here\n\n[ref]: javascript:alert(6)",
		"[shortcut]\n\n[shortcut]: data:text/html,<script>alert(7)</script>",
		"<javascript:alert(8)>",
		"[](javascript:alert(9))",
		"> quoted [q](javascript:alert(10))\n- item [l](javascript:alert(11))",
		"[n](<javascript:alert(12)>)",
		"[b](javascript\\:alert(13))",
	} {
		got := EscapeRawHTML(src)
		var out bytes.Buffer
		if err := unsafe.Convert([]byte(got), &out); err != nil {
			t.Fatal(err)
		}
		for _, m := range urlAttr.FindAllStringSubmatch(out.String(), -1) {
			if href := strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(html.UnescapeString(m[2])); badScheme.MatchString(strings.TrimSpace(href)) {
				t.Errorf("%q:\n%s\nrenders %s=%q", src, got, m[1], href)
			}
		}
		prose := mdFence.ReplaceAllString("\n"+got+"\n", "\n")
		if m := inlineLink.FindString(html.UnescapeString(prose)); m != "" {
			t.Errorf("%q:\n%s\nkeeps %q", src, got, m)
		}
		if !strings.Contains(html.UnescapeString(got), "alert(") && !strings.Contains(got, "msgbox(") {
			t.Errorf("%q lost its text: %s", src, got)
		}
	}
	safe := "[ok](https://example.com/a) [rel](notes.md#x) [mail](mailto:a@b.example)"
	if got := EscapeRawHTML(safe); got != safe {
		t.Errorf("safe links changed: %s", got)
	}
}

var (
	mdFence    = regexp.MustCompile("(?s)\n```[a-z]*\n.*?\n```\n")
	urlAttr    = regexp.MustCompile(`\s(href|src)="([^"]*)"`)
	badScheme  = regexp.MustCompile(`(?i)^(javascript|vbscript|data|file):`)
	inlineLink = regexp.MustCompile(`(?i)(^|[^\\])\[[^\[\]]*\]\(\s*<?\s*(javascript|vbscript|data|file):`)
)
