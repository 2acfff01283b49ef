package gocode

import (
	"fmt"
	"html"
	"strings"
)

// A module shows what it offers: the file, its hash and every function
// with its Starlark name and Go signature.

// HTML implements record.HTMLer.
func (m *Package) HTML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<div class=\"gocode\"><p>Go interpreted by yaegi: <code>%s</code> <small>sha256 %s</small></p><ul>",
		html.EscapeString(m.src.name), html.EscapeString(short(m.hash)))
	for _, f := range m.funcs {
		fmt.Fprintf(&b, "<li><code>%s</code> <small>func %s%s</small></li>",
			html.EscapeString(snake(f.name)), html.EscapeString(f.name), html.EscapeString(f.sig))
	}
	b.WriteString("</ul></div>")
	return b.String()
}

// Markdown implements record.Markdowner.
func (m *Package) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Go interpreted by yaegi: `%s` (sha256 %s)\n\n", m.src.name, short(m.hash))
	for _, f := range m.funcs {
		fmt.Fprintf(&b, "- `%s`: `func %s%s`\n", snake(f.name), f.name, f.sig)
	}
	return b.String()
}

// JSON implements record.JSONer.
func (m *Package) JSON() any {
	funcs := map[string]string{}
	for _, f := range m.funcs {
		funcs[snake(f.name)] = "func " + f.name + f.sig
	}
	return map[string]any{"file": m.src.name, "sha256": m.hash, "functions": funcs}
}

func short(hash string) string { return hash[:min(12, len(hash))] }
