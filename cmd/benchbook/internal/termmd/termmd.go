// Package termmd renders Markdown as text for a terminal: the REPL's values,
// the kernel's inspection and benchbook help's reference.
package termmd

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The REPL shows Markdown values (tables, runs, comparisons, md()) as text
// for a terminal: what the record would show, without the markup
// (**bold**, code fences, table pipes, the backslashes that escape _ in
// db\_cpu\_us\_per\_req). It walks goldmark's tree (the record's own
// parser) rather than use glamour: glamour added 3.6 MB and 18 modules to
// the binary (an HTML sanitizer, a CSS parser, emoji, terminfo) and pads
// every line it prints with styled spaces to the wrap width.

var termMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Render renders Markdown src as plain text; with color,
// headings and strong text are bold and code is dimmed cyan.
func Render(src string, color bool) string {
	source := []byte(src)
	doc := termMarkdown.Parser().Parse(text.NewReader(source))
	w := &termWriter{src: source, color: color}
	w.blocks(doc, "")
	return strings.TrimRight(w.out.String(), "\n") + "\n"
}

type termWriter struct {
	src   []byte
	color bool
	out   bytes.Buffer
}

func (w *termWriter) paint(code, s string) string {
	if !w.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// blocks writes the block children of n, each line prefixed by indent,
// separated by blank lines as in the source.
func (w *termWriter) blocks(n ast.Node, indent string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.block(c, indent)
		if c.NextSibling() != nil && !tight(n) {
			w.out.WriteString("\n")
		}
	}
}

// tight reports whether n's children follow each other without blank lines
// (the items of a tight list).
func tight(n ast.Node) bool {
	if l, ok := n.(*ast.List); ok {
		return l.IsTight
	}
	_, item := n.(*ast.ListItem)
	return item && n.Parent() != nil && tight(n.Parent())
}

func (w *termWriter) block(n ast.Node, indent string) {
	switch n := n.(type) {
	case *ast.Heading:
		line := w.inline(n)
		w.line(indent, w.paint("1", line))
		if n.Level <= 2 {
			rule := "="
			if n.Level == 2 {
				rule = "-"
			}
			w.line(indent, strings.Repeat(rule, utf8.RuneCountInString(line)))
		}
	case *ast.Paragraph, *ast.TextBlock:
		for _, l := range strings.Split(w.inline(n), "\n") {
			w.line(indent, l)
		}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			w.line(indent+"    ", w.paint("36", strings.TrimRight(string(seg.Value(w.src)), "\n")))
		}
	case *ast.Blockquote:
		w.blocks(n, indent+"│ ")
	case *ast.List:
		w.list(n, indent)
	case *ast.ThematicBreak:
		w.line(indent, strings.Repeat("─", 40))
	case *east.Table:
		w.table(n, indent)
	case *ast.HTMLBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			w.line(indent, strings.TrimRight(string(seg.Value(w.src)), "\n"))
		}
	default:
		w.blocks(n, indent)
	}
}

func (w *termWriter) line(indent, s string) {
	w.out.WriteString(strings.TrimRight(indent+s, " ") + "\n")
}

// list writes each item after its bullet or number, its later lines
// indented under its first.
func (w *termWriter) list(l *ast.List, indent string) {
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		mark := "• "
		if l.IsOrdered() {
			mark = strconv.Itoa(num) + ". "
			num++
		}
		sub := &termWriter{src: w.src, color: w.color}
		sub.blocks(item, "")
		lines := strings.Split(strings.TrimRight(sub.out.String(), "\n"), "\n")
		pad := strings.Repeat(" ", utf8.RuneCountInString(mark))
		for i, s := range lines {
			if i == 0 {
				w.line(indent+mark, s)
			} else {
				w.line(indent+pad, s)
			}
		}
		if !l.IsTight && item.NextSibling() != nil {
			w.out.WriteString("\n")
		}
	}
}

// table aligns the columns as the Markdown asks (numbers to the right),
// with a rule under the header.
func (w *termWriter) table(t *east.Table, indent string) {
	var rows [][]string
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			row = append(row, w.inline(c))
		}
		rows = append(rows, row)
	}
	width := make([]int, len(t.Alignments))
	for _, row := range rows {
		for j, s := range row {
			if j < len(width) {
				width[j] = max(width[j], utf8.RuneCountInString(s))
			}
		}
	}
	for i, row := range rows {
		cells := make([]string, len(width))
		for j := range width {
			s := ""
			if j < len(row) {
				s = row[j]
			}
			gap := strings.Repeat(" ", width[j]-utf8.RuneCountInString(s))
			if t.Alignments[j] == east.AlignRight {
				s = gap + s
			} else {
				s += gap
			}
			if i == 0 {
				s = w.paint("1", s)
			}
			cells[j] = s
		}
		w.line(indent, strings.Join(cells, "  "))
		if i == 0 {
			rules := make([]string, len(width))
			for j, n := range width {
				rules[j] = strings.Repeat("─", n)
			}
			w.line(indent, strings.Join(rules, "  "))
		}
	}
}

// inline is the text of n's inline children: escapes resolved, emphasis
// and code marked only by colour, a link followed by its address.
func (w *termWriter) inline(n ast.Node) string {
	var b strings.Builder
	_, code := n.(*ast.CodeSpan)
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(w.src)
			if !code { // as goldmark's HTML writer does: \_ is _, &lt; is <
				v = util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(v)))
			}
			b.Write(v)
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteString("\n")
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			b.WriteString(w.paint("36", w.inline(c)))
		case *ast.Emphasis:
			code := "3"
			if c.Level >= 2 {
				code = "1"
			}
			b.WriteString(w.paint(code, w.inline(c)))
		case *ast.Link:
			label, dest := w.inline(c), string(c.Destination)
			b.WriteString(label)
			if dest != "" && dest != label {
				b.WriteString(" (" + dest + ")")
			}
		case *ast.AutoLink:
			b.Write(c.URL(w.src))
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				b.Write(seg.Value(w.src))
			}
		default:
			b.WriteString(w.inline(c))
		}
	}
	return b.String()
}
