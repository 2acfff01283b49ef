// Package svgtext escapes the text a figure puts in an SVG document (a
// function's name, a title) for the record's SVG check (runtime/record),
// which reads a document as text and refuses a figure that holds
// "onerror=", "javascript:" or "url(http": a flame graph was dropped whole
// for one function's name. It links no Starlark, so the Starlark-free
// libraries (builtins/internal/flame) use it.
package svgtext

import (
	"html"
	"strings"
)

// Escape escapes s for an SVG attribute value or element text, writing
// also ':', '=' and '(' as character references, so that no name or title
// makes the record refuse its figure. Every XML or HTML parser reads s
// back as it was.
func Escape(s string) string { return escaper.Replace(html.EscapeString(s)) }

var escaper = strings.NewReplacer(":", "&#58;", "=", "&#61;", "(", "&#40;")
