package record

import (
	"strings"
	"testing"
)

func TestCheckSVG(t *testing.T) {
	for doc, want := range map[string]string{
		`<?xml version="1.0"?><!-- c --><svg width="1"><rect/></svg>`: "",
		"<!DOCTYPE svg>\n<svg></svg>\n":                               "",
		`<svg><text>on a=1 is text, not an attribute</text></svg>`:    "",
		`<div></div>`:                                               "not an SVG",
		`<svg></svg><script>alert(1)</script>`:                      "not an SVG",
		`<svg><script>alert(1)</script></svg>`:                      "<script",
		`<svg><a href="javascript:alert(1)"><rect/></a></svg>`:      "javascript:",
		`<svg><rect ONLOAD="alert(1)"/></svg>`:                      "event handler",
		`<svg><image href="https://example.com/x.png"/></svg>`:      "href=\"http",
		`<svg><rect style="fill:url(http://example.com/p)"/></svg>`: "url(http",
		`<svg><foreignObject><div>x</div></foreignObject></svg>`:    "<foreignobject",
	} {
		got := checkSVG([]byte(doc))
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("checkSVG(%q) = %q, want %q", doc, got, want)
		}
	}
	if got := inlineSVG([]byte(`<?xml version="1.0"?>` + "\n<svg></svg>")); got != "<svg></svg>" {
		t.Errorf("inlineSVG kept the prolog: %q", got)
	}
}

func TestEscapeRawHTML(t *testing.T) {
	in := "# T\n\nsome <b>bold</b> and `<code>` kept\n\n<div>\nblock\n</div>\n\n```\n<pre>in a fence</pre>\n```\n"
	got := EscapeRawHTML(in)
	for _, want := range []string{"&lt;b>bold&lt;/b>", "`<code>`", "&lt;div>", "<pre>in a fence</pre>"} {
		if !strings.Contains(got, want) {
			t.Errorf("EscapeRawHTML lacks %q:\n%s", want, got)
		}
	}
}
