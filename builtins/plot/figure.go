package plot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"html"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Figure is a rendered chart: the SVG document and the title it was drawn
// with. It is immutable, so it is frozen from birth and can be cached.
type Figure struct {
	title string
	svg   []byte
}

// NewFigure wraps an SVG document (for other builtins that draw charts).
func NewFigure(title string, svg []byte) *Figure { return &Figure{title: title, svg: svg} }

var (
	_ starlark.HasAttrs = (*Figure)(nil)
	_ codec.Marshaler   = (*Figure)(nil)
)

func (f *Figure) String() string {
	return fmt.Sprintf("<figure %q, %d bytes of SVG>", f.title, len(f.svg))
}
func (f *Figure) Type() string          { return "figure" }
func (f *Figure) Freeze()               {}
func (f *Figure) Truth() starlark.Bool  { return true }
func (f *Figure) Hash() (uint32, error) { return 0, errors.New("unhashable type: figure") }

// CompareSameType: figures are equal when they have the same title and
// draw the same SVG, byte for byte.
func (f *Figure) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	g := y.(*Figure)
	return starval.EqualOnly(op, f.title == g.title && bytes.Equal(f.svg, g.svg), f, y)
}

// Title is the figure's title as drawn.
func (f *Figure) Title() string { return f.title }

// SVG returns the standalone SVG document (record.SVGer).
func (f *Figure) SVG() []byte { return f.svg }

// HTML returns the SVG inline, without its XML prologue (record.HTMLer).
// The SVG's text was escaped by the SVG writer.
func (f *Figure) HTML() string {
	svg := string(f.svg)
	if i := strings.Index(svg, "<svg"); i > 0 {
		svg = svg[i:]
	}
	return `<figure class="bb-figure" aria-label="` + html.EscapeString(f.title) + `">` + svg + "</figure>"
}

// JSON is the summary used by the JSON record (record.JSONer).
func (f *Figure) JSON() any {
	return map[string]any{"type": "figure", "title": f.title, "svg_bytes": len(f.svg)}
}

// Attr exposes the title and the SVG text to notebooks.
func (f *Figure) Attr(name string) (starlark.Value, error) {
	switch name {
	case "title":
		return starlark.String(f.title), nil
	case "svg":
		return starlark.String(f.svg), nil
	}
	return nil, nil
}

// AttrNames lists the attributes of a figure.
func (f *Figure) AttrNames() []string { return []string{"svg", "title"} }

// MarshalValue stores the title and the SVG, each prefixed by its length.
func (f *Figure) MarshalValue() ([]byte, error) {
	var buf bytes.Buffer
	for _, part := range [][]byte{[]byte(f.title), f.svg} {
		buf.Write(binary.AppendUvarint(nil, uint64(len(part))))
		buf.Write(part)
	}
	return buf.Bytes(), nil
}

func decodeFigure(data []byte, _ codec.Types) (starlark.Value, error) {
	var parts [2][]byte
	for i := range parts {
		n, size := binary.Uvarint(data)
		if size <= 0 || uint64(len(data)-size) < n {
			return nil, errors.New("figure: truncated data")
		}
		parts[i] = data[size : size+int(n)]
		data = data[size+int(n):]
	}
	if len(data) != 0 {
		return nil, errors.New("figure: trailing bytes")
	}
	return &Figure{title: string(parts[0]), svg: append([]byte(nil), parts[1]...)}, nil
}
