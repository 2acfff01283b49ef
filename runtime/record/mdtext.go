package record

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// markdownEngine renders notebook Markdown. It is built WITHOUT
// html.WithUnsafe(): a notebook is untrusted input, so raw HTML in it is
// omitted and dangerous link schemes (javascript:) are dropped.
var markdownEngine = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
)

// MarkdownToHTML renders GitHub-flavoured Markdown to an HTML fragment with
// raw HTML disabled. Display values (md(...)) and Markdown cells use it.
func MarkdownToHTML(src string) string {
	html, _ := renderMarkdown(src, newHeadingIDs("md-"))
	return html
}

// heading is an entry of the table of contents.
type heading struct {
	Level int
	Text  string
	ID    string
}

// renderMarkdown renders src with heading ids drawn from ids (shared by the
// whole record so that ids stay unique) and returns the headings found.
// Text nested past maxMarkdownNesting is shown as preformatted text,
// whole, with a line saying why.
func renderMarkdown(src string, ids *headingIDs) (string, []heading) {
	if line, depth := markdownNesting(src); depth > maxMarkdownNesting {
		return fmt.Sprintf(`<p class="warn">⚠ Markdown nested %d levels deep at line %d (more than %d): shown as text</p><pre>%s</pre>`,
			depth, line, maxMarkdownNesting, escapeText(src)), nil
	}
	source := []byte(src)
	ctx := parser.NewContext(parser.WithIDs(ids))
	doc := markdownEngine.Parser().Parse(text.NewReader(source), parser.WithContext(ctx))
	var heads []heading
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			id, _ := h.AttributeString("id")
			idb, _ := id.([]byte)
			heads = append(heads, heading{Level: h.Level, Text: headingText(h, source), ID: string(idb)})
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	var buf bytes.Buffer
	if err := markdownEngine.Renderer().Render(&buf, source, doc); err != nil {
		return "<pre>" + escapeText(src) + "</pre>", heads
	}
	return buf.String(), heads
}

// maxMarkdownNesting bounds the blocks (quotes, list items) a line of
// Markdown may open inside one another. goldmark takes time quadratic in
// that nesting: md(">" * 200000 + " hi") rendered for 42-77 s, deaf to
// SIGTERM, and 2,000 list items each indented under the last for 31 s.
const maxMarkdownNesting = 100

// markdownNesting is the deepest nesting of blocks a line of src opens and
// its line: each '>', each list marker ("-", "+", "*", "1." or "1)" before
// a blank) and each two columns of indentation count one level. It
// overestimates (an indented code block counts), never underestimates.
func markdownNesting(src string) (line, depth int) {
	for n, l := range strings.Split(src, "\n") {
		if d := lineNesting(l); d > depth {
			line, depth = n+1, d
		}
	}
	return line, depth
}

func lineNesting(l string) int {
	depth, indent := 0, 0
	for i := 0; i < len(l); {
		switch c := l[i]; {
		case c == ' ':
			indent++
			i++
		case c == '\t':
			indent += 4
			i++
		case c == '>':
			depth++
			i++
		case (c == '-' || c == '+' || c == '*') && i+1 < len(l) && (l[i+1] == ' ' || l[i+1] == '\t'):
			depth++
			i += 2
		case c >= '0' && c <= '9':
			j := i
			for j < len(l) && j-i < 9 && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j+1 >= len(l) || (l[j] != '.' && l[j] != ')') || (l[j+1] != ' ' && l[j+1] != '\t') {
				return depth + indent/2
			}
			depth++
			i = j + 2
		default:
			return depth + indent/2
		}
	}
	return depth + indent/2
}

// headingText is the plain text of a heading (its text and code spans).
func headingText(n ast.Node, source []byte) string {
	var buf bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			buf.Write(t.Segment.Value(source))
			if t.SoftLineBreak() {
				buf.WriteByte(' ')
			}
		case *ast.String:
			buf.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return buf.String()
}

// headingIDs gives unique, readable ids ("hypothesis", "hypothesis-1").
type headingIDs struct {
	prefix string
	used   map[string]bool
}

func newHeadingIDs(prefix string) *headingIDs {
	return &headingIDs{prefix: prefix, used: map[string]bool{}}
}

func (h *headingIDs) Generate(value []byte, _ ast.NodeKind) []byte {
	base := h.prefix + slug(string(value))
	id := base
	for i := 1; h.used[id]; i++ {
		id = base + "-" + strconv.Itoa(i)
	}
	h.used[id] = true
	return []byte(id)
}

func (h *headingIDs) Put(value []byte) { h.used[string(value)] = true }

// slug keeps letters and digits, lowercased, joined by single dashes.
func slug(s string) string {
	var b []byte
	dash := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b = append(b, byte(r))
			dash = false
		case r >= 'A' && r <= 'Z':
			b = append(b, byte(r-'A'+'a'))
			dash = false
		default:
			if len(b) > 0 && !dash {
				b = append(b, '-')
				dash = true
			}
		}
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "section"
	}
	return string(b)
}

// EscapeRawHTML returns Markdown src with the '<' of every raw HTML tag or
// block turned into "&lt;", so the HTML shows as text wherever the Markdown
// is rendered (the HTML record omits it; an issue tracker may not).
func EscapeRawHTML(src string) string {
	source := []byte(src)
	doc := markdownEngine.Parser().Parse(text.NewReader(source))
	var spans []text.Segment
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch h := n.(type) {
		case *ast.RawHTML:
			for i := 0; i < h.Segments.Len(); i++ {
				spans = append(spans, h.Segments.At(i))
			}
		case *ast.HTMLBlock:
			for i := 0; i < h.Lines().Len(); i++ {
				spans = append(spans, h.Lines().At(i))
			}
			if h.HasClosure() {
				spans = append(spans, h.ClosureLine)
			}
		}
		return ast.WalkContinue, nil
	})
	if len(spans) == 0 {
		return src
	}
	escape := make([]bool, len(source))
	for _, s := range spans {
		for i := s.Start; i < s.Stop && i < len(source); i++ {
			escape[i] = source[i] == '<'
		}
	}
	var b strings.Builder
	for i, c := range source {
		if escape[i] {
			b.WriteString("&lt;")
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
