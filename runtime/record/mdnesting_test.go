package record

import (
	"strings"
	"testing"
	"time"
)

// TestDeeplyNestedMarkdownRendersAtOnce: md(">" * 200000 + " hi")
// rendered for 42-77 s and 2,000 list items indented each under the last
// for 31 s (goldmark is quadratic in the nesting); past 100 levels the
// text is shown whole as preformatted text, saying why, in milliseconds.
// Nesting within the bound still renders as Markdown.
func TestDeeplyNestedMarkdownRendersAtOnce(t *testing.T) {
	var indented strings.Builder
	for i := range 2000 {
		indented.WriteString(strings.Repeat("  ", i) + "- item\n")
	}
	for name, src := range map[string]string{
		"quotes":   strings.Repeat(">", 200000) + " hi",
		"spaced":   strings.Repeat("> ", 100000) + " hi",
		"lists":    strings.Repeat("- ", 100000) + " hi",
		"numbered": strings.Repeat("1. ", 100000) + " hi",
		"indented": indented.String(),
	} {
		start := time.Now()
		html := MarkdownToHTML(src)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: rendered in %v", name, d)
		}
		if !strings.Contains(html, "shown as text") || !strings.Contains(html, "<pre>") || strings.Count(html, "hi")+strings.Count(html, "item") == 0 {
			t.Errorf("%s: %.300s", name, html)
		}
	}
	html := MarkdownToHTML(strings.Repeat(">", 50) + " deep but fine\n\n- a\n  - b\n    1. c\n")
	if strings.Count(html, "<blockquote>") != 50 || strings.Count(html, "<li>") != 3 || strings.Contains(html, "shown as text") {
		t.Errorf("within the bound: %.500s", html)
	}
}
