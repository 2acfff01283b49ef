package record

import "go.starlark.net/starlark"

// ValueHTML is one output value as the HTML record shows it: the value's
// own HTML (escaped by it), a figure inlined after the SVG check, anything
// else escaped in a <pre>, with its downloads as data: links. Other
// presenters (the Jupyter kernel) use it so a value looks the same there.
func ValueHTML(v starlark.Value) string { return string(valueHTML(v)) }

// CheckedSVG returns an SVG document without its prolog when it may be
// shown (no script, no event handler, nothing fetched), else "" and why not.
func CheckedSVG(doc []byte) (svg, reason string) {
	if reason := checkSVG(doc); reason != "" {
		return "", reason
	}
	return stripProlog(string(doc)), ""
}
