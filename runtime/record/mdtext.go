package record

import (
	"bytes"
	"fmt"
	"html"
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

// EscapeRawHTML returns Markdown src made safe for any renderer: the '<' of
// every raw HTML tag or block turned into "&lt;", so the HTML shows as
// text wherever the Markdown is rendered (the HTML record omits it; an
// issue tracker may not), and the '[' of every link or image whose
// destination is not http, https, mailto or relative escaped, so
// "[x](javascript:...)" shows as text (the HTML record's renderer drops
// such a link; the .md record kept it). Text nested past the bound the
// HTML record has, or with a dangerous link it cannot place (an autolink,
// a link with no text), is fenced whole as text, saying why.
func EscapeRawHTML(src string) string {
	if line, depth := markdownNesting(src); depth > maxMarkdownNesting {
		return asText(fmt.Sprintf("Markdown nested %d levels deep at line %d (more than %d): shown as text", depth, line, maxMarkdownNesting), src)
	}
	source := []byte(src)
	spans, brackets, unplaced := scanMarkdown(source)
	if unplaced != "" {
		return asText(fmt.Sprintf("Markdown with a link to %q: shown as text", unplaced), src)
	}
	if len(spans) == 0 && len(brackets) == 0 {
		return src
	}
	escape := make([]bool, len(source))
	for _, s := range spans {
		for i := s.Start; i < s.Stop && i < len(source); i++ {
			escape[i] = source[i] == '<'
		}
	}
	for _, at := range brackets {
		escape[at] = true
	}
	var b strings.Builder
	for i, c := range source {
		switch {
		case escape[i] && c == '<':
			b.WriteString("&lt;")
		case escape[i]:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	if len(brackets) > 0 {
		// A reference ("[x][ref]": "[ref]" alone is a link too) or an
		// autolink inside the escaped text may still link: then the whole.
		if _, again, unplaced := scanMarkdown([]byte(out)); len(again) > 0 || unplaced != "" {
			return asText("Markdown with a link to a script or a file: shown as text", src)
		}
	}
	return out
}

// scanMarkdown parses source and returns the spans of its raw HTML, the
// offsets of the '[' of its links whose destination is unsafe, and the
// destination of an unsafe link it cannot place (an autolink, a link with
// no text).
func scanMarkdown(source []byte) (spans []text.Segment, brackets []int, unplaced string) {
	doc := markdownEngine.Parser().Parse(text.NewReader(source))
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
		case *ast.Link:
			brackets, unplaced = defuse(h, h.Destination, source, brackets, unplaced)
		case *ast.Image:
			brackets, unplaced = defuse(h, h.Destination, source, brackets, unplaced)
		case *ast.AutoLink:
			if unsafeURL(h.URL(source)) {
				unplaced = string(h.URL(source))
			}
		}
		return ast.WalkContinue, nil
	})
	return spans, brackets, unplaced
}

// asText is src fenced as text under a quoted line saying why.
func asText(why, src string) string {
	return "> ⚠ " + why + "\n\n" + fenced("", strings.TrimRight(src, "\n"))
}

// defuse notes where to escape link n when dest is unsafe, or that it
// cannot be placed.
func defuse(n ast.Node, dest, source []byte, brackets []int, unplaced string) ([]int, string) {
	if !unsafeURL(dest) {
		return brackets, unplaced
	}
	if at := openingBracket(n, source); at >= 0 {
		return append(brackets, at), unplaced
	}
	return brackets, string(dest)
}

// openingBracket is the offset of the '[' that opens link n's text: the
// last '[' before the first text inside it. -1 when the link has no text
// to place it by.
func openingBracket(n ast.Node, source []byte) int {
	first := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering && first < 0 {
			first = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	for i := first - 1; i >= 0 && first >= 0; i-- {
		if source[i] == '[' && (i == 0 || source[i-1] != '\\') {
			return i
		}
	}
	return -1
}

// unsafeURL says whether a link's destination has a scheme other than
// http, https and mailto, read as a browser reads an href: leading
// controls and spaces dropped, tabs and newlines removed anywhere.
func unsafeURL(dest []byte) bool {
	s := strings.TrimLeft(html.UnescapeString(unBackslash(string(dest))), "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	scheme, _, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || !isAlpha(scheme[0]) {
		return false
	}
	for i := 0; i < len(scheme); i++ {
		if c := scheme[i]; !isAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false // "a/b:c", "?x:y": a relative reference
		}
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "mailto":
		return false
	}
	return true
}

// unBackslash drops the backslash of every escaped punctuation character,
// as CommonMark reads a destination ("javascript\\:x" is "javascript:x").
func unBackslash(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
