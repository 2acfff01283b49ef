package export

import (
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/fmtnum"
	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// File is exported data: a name, a MIME type and the text. It displays as
// a preview and is offered as a download by the record.
type File struct {
	Name string
	MIME string
	Text string
}

var (
	_ starlark.HasAttrs = (*File)(nil)
	_ codec.Marshaler   = (*File)(nil)
	_ record.Downloader = (*File)(nil)
	_ record.HTMLer     = (*File)(nil)
	_ record.Markdowner = (*File)(nil)
	_ record.JSONer     = (*File)(nil)
)

// previewLines is how much of a file the record shows inline.
const previewLines = 12

func (f *File) String() string        { return f.Text }
func (f *File) Type() string          { return "export" }
func (f *File) Freeze()               {}
func (f *File) Truth() starlark.Bool  { return f.Text != "" }
func (f *File) Hash() (uint32, error) { return starlark.String(f.Text).Hash() }

// CompareSameType: exports are equal when name, type and text are (Hash,
// of the text, agrees).
func (f *File) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	return starval.EqualOnly(op, *f == *y.(*File), f, y)
}

func (f *File) AttrNames() []string { return []string{"mime", "name", "text"} }

func (f *File) Attr(name string) (starlark.Value, error) {
	switch name {
	case "name":
		return starlark.String(f.Name), nil
	case "mime":
		return starlark.String(f.MIME), nil
	case "text":
		return starlark.String(f.Text), nil
	}
	return nil, nil
}

// Downloads offers the whole text as one file.
func (f *File) Downloads() []record.Download {
	return []record.Download{{Name: f.Name, MIME: f.MIME, Data: []byte(f.Text)}}
}

// preview returns the first lines and how many were left out.
func (f *File) preview() (string, int) {
	lines := strings.SplitAfter(f.Text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= previewLines {
		return f.Text, 0
	}
	return strings.Join(lines[:previewLines], ""), len(lines) - previewLines
}

func (f *File) summary(more int) string {
	s := fmt.Sprintf("%s, %d bytes", f.Name, len(f.Text))
	if more > 0 {
		s += fmt.Sprintf(", %d more lines", more)
	}
	return s
}

// HTML shows the head of the file, a CSV file as a table; the record adds
// the download link.
func (f *File) HTML() string {
	head, more := f.preview()
	body := ""
	if f.MIME == "text/csv" {
		body = csvTable(head)
	}
	if body == "" {
		body = `<pre class="export">` + html.EscapeString(head) + `</pre>`
	}
	return body + `<p class="export-note">` + html.EscapeString(f.summary(more)) + `</p>`
}

// csvTable renders CSV text as a table, numbers formatted as the record's
// other tables do; "" if the text does not parse.
func csvTable(text string) string {
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<table class="export"><thead><tr>`)
	for _, h := range rows[0] {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, row := range rows[1:] {
		b.WriteString("<tr>")
		for _, cell := range row {
			if x, err := strconv.ParseFloat(cell, 64); err == nil {
				b.WriteString(`<td class="num">` + html.EscapeString(fmtnum.Float(x)) + "</td>")
				continue
			}
			b.WriteString("<td>" + html.EscapeString(cell) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// Markdown shows the head of the file in a code block.
func (f *File) Markdown() string {
	head, more := f.preview()
	fence := "```"
	for strings.Contains(head, fence) {
		fence += "`"
	}
	return fence + "\n" + strings.TrimSuffix(head, "\n") + "\n" + fence + "\n\n*" + f.summary(more) + "*\n"
}

// JSON describes the file; its text is included whole.
func (f *File) JSON() any {
	return map[string]any{"type": "export", "name": f.Name, "mime": f.MIME, "text": f.Text}
}

// MarshalValue stores the three strings, each prefixed by its length.
func (f *File) MarshalValue() ([]byte, error) {
	var b []byte
	for _, s := range []string{f.Name, f.MIME, f.Text} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

func decodeFile(data []byte, _ codec.Types) (starlark.Value, error) {
	var parts [3]string
	for i := range parts {
		n, size := binary.Uvarint(data)
		if size <= 0 || uint64(len(data)-size) < n {
			return nil, errors.New("file: truncated data")
		}
		parts[i] = string(data[size : size+int(n)])
		data = data[size+int(n):]
	}
	if len(data) != 0 {
		return nil, errors.New("file: trailing bytes")
	}
	return &File{Name: parts[0], MIME: parts[1], Text: parts[2]}, nil
}

// fileName is the name given, else base + ext with base made safe.
func fileName(given, base, ext string) string {
	if given != "" {
		return given
	}
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, base)
	for strings.Contains(safe, "--") {
		safe = strings.ReplaceAll(safe, "--", "-")
	}
	if safe = strings.Trim(safe, "-."); safe == "" {
		safe = "data"
	}
	return safe + ext
}
