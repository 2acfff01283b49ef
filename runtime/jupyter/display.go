package jupyter

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/record"
)

// Bundle is a value as a MIME bundle, the way the HTML record presents it:
// a figure as image/svg+xml, md(...) as text/markdown, a value with HTML (a
// table, a run, a comparison, a verdict) as text/html, each with a
// text/plain twin (its Markdown when it has one) for consoles. A value
// whose display method panics is shown as that error.
func Bundle(v starlark.Value) (data map[string]any) {
	defer func() {
		if p := recover(); p != nil {
			data = map[string]any{"text/plain": fmt.Sprintf("(cannot display %s value: %v)", v.Type(), p)}
		}
	}()
	data = map[string]any{"text/plain": plainText(v)}
	switch x := v.(type) {
	case record.SVGer:
		if svg, reason := record.CheckedSVG(x.SVG()); reason != "" {
			data["text/plain"] = reason
		} else {
			data["image/svg+xml"] = svg
		}
		return data
	}
	if md, ok := v.(record.Markdowner); ok && v.Type() == "markdown" {
		// Raw HTML shows as text, as in the Markdown record: a notebook
		// (and the data it formats into md()) is untrusted.
		data["text/markdown"] = record.EscapeRawHTML(md.Markdown())
		return data
	}
	if _, ok := v.(record.HTMLer); ok {
		data["text/html"] = record.ValueHTML(v)
	}
	return data
}

// plainText is a value for a console: its Markdown when it has one (text
// tables and bars), else how Starlark prints it.
func plainText(v starlark.Value) string {
	if md, ok := v.(record.Markdowner); ok {
		return md.Markdown()
	}
	return v.String()
}
