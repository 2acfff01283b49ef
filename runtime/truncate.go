package runtime

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/record"
)

// displayLimit is the most text of one output or one cell's source that a
// record shows; past it a browser struggles to open the page. The whole
// text is offered as a gzip download beside what is shown (and stays whole
// in the cache and in a JSON record).
const displayLimit = 1 << 20

// shown returns v as a record shows it: a text output over displayLimit
// becomes a longText. Figures and HTML fragments present themselves.
func shown(cell string, n int, v starlark.Value) starlark.Value {
	switch v.(type) {
	case record.HTMLer, record.SVGer, *longText:
		return v
	}
	text := v.String()
	if s, ok := v.(starlark.String); ok {
		text = string(s)
	}
	if len(text) <= displayLimit {
		return v
	}
	return &longText{typ: v.Type(), full: text, file: fmt.Sprintf("%s-output-%d.txt", cell, n)}
}

// shownSource cuts a cell's source over displayLimit; the second result
// offers the whole as a download (nil when nothing was cut).
func shownSource(cell, src string, markdown bool) (string, starlark.Value) {
	if len(src) <= displayLimit {
		return src, nil
	}
	long := &longText{typ: "source", full: src, file: cell + "-source.txt"}
	note := long.note()
	if markdown {
		return cut(src) + "\n\n*" + note + "*\n", long
	}
	return cut(src) + "\n# " + note + "\n", long
}

// longText is a text too long to show whole.
type longText struct {
	typ  string // the original value's type ("printed" keeps its style)
	full string
	file string // download name, without ".gz"
}

// cut returns the longest prefix of s within displayLimit that ends a line
// (or at least a whole UTF-8 character).
func cut(s string) string {
	if i := strings.LastIndexByte(s[:displayLimit], '\n'); i > 0 {
		return s[:i+1]
	}
	i := displayLimit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func (l *longText) note() string {
	rest := len(l.full) - len(cut(l.full))
	return fmt.Sprintf("… %.1f MB more not shown (%d lines in all): the whole text is the download %s.gz",
		float64(rest)/(1<<20), strings.Count(l.full, "\n")+1, l.file)
}

func (l *longText) String() string {
	head := cut(l.full)
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return head + l.note() + "\n"
}

func (l *longText) Type() string          { return l.typ }
func (l *longText) Freeze()               {}
func (l *longText) Truth() starlark.Bool  { return true }
func (l *longText) Hash() (uint32, error) { return starlark.String(l.full).Hash() }

// JSON keeps the whole text in a JSON record, which is read by tools.
func (l *longText) JSON() any { return l.full }

// Downloads offers the whole text, compressed: logs compress well, and the
// HTML record embeds downloads.
func (l *longText) Downloads() []record.Download {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(l.full))
	zw.Close()
	return []record.Download{{Name: l.file + ".gz", MIME: "application/gzip", Data: buf.Bytes()}}
}
