// Package markdown is the Markdown value: text that md() and the verdicts
// emit, shown in the record exactly as a Markdown cell is.
package markdown

import (
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
)

// Markdown is text emitted by md(): shown in the record exactly as a
// Markdown cell is, raw HTML disabled.
type Markdown string

var (
	_ record.HTMLer     = Markdown("")
	_ record.Markdowner = Markdown("")
	_ record.JSONer     = Markdown("")
	_ codec.Marshaler   = Markdown("")
)

func (m Markdown) String() string        { return string(m) }
func (m Markdown) Type() string          { return "markdown" }
func (m Markdown) Freeze()               {}
func (m Markdown) Truth() starlark.Bool  { return m != "" }
func (m Markdown) Hash() (uint32, error) { return starlark.String(m).Hash() }

// HTML renders the Markdown with the record's engine.
func (m Markdown) HTML() string {
	return `<div class="md">` + record.MarkdownToHTML(string(m)) + `</div>`
}

// Markdown returns the text itself.
func (m Markdown) Markdown() string { return string(m) }

// JSON is the text.
func (m Markdown) JSON() any { return string(m) }

// MarshalValue stores the text.
func (m Markdown) MarshalValue() ([]byte, error) { return []byte(m), nil }

// Decode is the codec decoder of a stored Markdown value.
func Decode(data []byte, _ codec.Types) (starlark.Value, error) { return Markdown(data), nil }
