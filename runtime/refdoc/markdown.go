package refdoc

import (
	"strings"
)

// A Block is one fenced code block of a Markdown text.
type Block struct {
	Info string // the words after the opening fence: "python needs=postgres"
	Code string
	Line int // of the code's first line, counting from 1
}

// Lang is the block's language, the first word of its info string.
func (b Block) Lang() string {
	lang, _, _ := strings.Cut(b.Info, " ")
	return lang
}

// Example reads the block as an example (see the package doc).
func (b Block) Example() Example {
	ex := Example{Code: b.Code, Line: b.Line}
	words := strings.Fields(b.Info)
	if len(words) == 0 {
		return ex
	}
	for _, w := range words[1:] {
		switch {
		case w == "fragment":
			ex.Fragment = true
		case strings.HasPrefix(w, "needs="):
			ex.Needs = append(ex.Needs, strings.Split(strings.TrimPrefix(w, "needs="), ",")...)
		}
	}
	return ex
}

// Blocks are the fenced code blocks of md, in order. A block left open
// runs to the end, as CommonMark has it.
func Blocks(md string) []Block {
	var out []Block
	var cur *Block
	var code []string
	var indent int // the opening fence's, which its lines lose (a block in a list item)
	for i, l := range lines(md) {
		switch {
		case l.open:
			cur = &Block{Info: l.info, Line: i + 2}
			code, indent = nil, len(l.text)-len(strings.TrimLeft(l.text, " "))
		case l.close:
			cur.Code = strings.Join(code, "\n") + "\n"
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			code = append(code, dedentBy(l.text, indent))
		}
	}
	if cur != nil {
		cur.Code = strings.Join(code, "\n") + "\n"
		out = append(out, *cur)
	}
	return out
}

// dedentBy removes up to n leading spaces, as CommonMark does to the lines
// of a fenced block whose fence is indented.
func dedentBy(s string, n int) string {
	for i := 0; i < n && strings.HasPrefix(s, " "); i++ {
		s = s[1:]
	}
	return s
}

// A line of Markdown, and whether it is part of a fenced code block.
type line struct {
	text        string
	fenced      bool   // an opening or closing fence, or a line between them
	open, close bool   // the fences themselves
	info        string // an opening fence's info string
}

// lines splits md into lines and marks its fenced code blocks: a fence is
// three or more backticks or tildes, indented at most three spaces; the
// block ends at a fence of the same character at least as long.
func lines(md string) []line {
	var out []line
	var fence string // the open fence, "" outside a block
	for _, text := range strings.Split(md, "\n") {
		l := line{text: text, fenced: fence != ""}
		trimmed := strings.TrimLeft(text, " ")
		indent := len(text) - len(trimmed)
		switch f := fenceOf(trimmed); {
		case fence == "" && f != "" && indent <= 3:
			fence = f
			l.fenced, l.open = true, true
			l.info = strings.TrimSpace(trimmed[len(f):])
		case fence != "" && indent <= 3 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "":
			fence = ""
			l.close = true
		}
		out = append(out, l)
	}
	return out
}

// fenceOf is the fence a line opens with ("```", "~~~~"), or "".
func fenceOf(s string) string {
	for _, c := range []string{"`", "~"} {
		n := len(s) - len(strings.TrimLeft(s, c))
		if n >= 3 {
			return s[:n]
		}
	}
	return ""
}
