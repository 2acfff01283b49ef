package record

import (
	"bytes"
	"html/template"
	"regexp"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
)

// codeFormatter writes CSS classes, not inline styles, so the stylesheet is
// embedded once per page whatever the number of cells.
var codeFormatter = chromahtml.New(chromahtml.WithClasses(true))

// pageCSS is the page's stylesheet: ours, then the code colours for the
// light theme and, under prefers-color-scheme: dark, for the dark one.
var pageCSS = baseCSS + chromaCSS(lightStyle, "") + chromaCSS(darkStyle, "@media (prefers-color-scheme: dark)")

var (
	cssComment = regexp.MustCompile(`/\*[^*]*\*/ ?`)
	cssBlank   = regexp.MustCompile(`\n\s*\n`)
)

// chromaCSS returns the class rules of a chroma style, minus comments and
// the background (the page's own colours apply), wrapped in media if set.
func chromaCSS(style *chroma.Style, media string) string {
	var buf bytes.Buffer
	if err := codeFormatter.WriteCSS(&buf, style); err != nil {
		return ""
	}
	var keep []string
	for _, line := range strings.Split(cssComment.ReplaceAllString(buf.String(), ""), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ".bg ") || strings.HasPrefix(line, ".chroma {") {
			continue
		}
		keep = append(keep, line)
	}
	css := cssBlank.ReplaceAllString(strings.Join(keep, "\n"), "\n")
	if media != "" {
		return media + "{\n" + css + "\n}\n"
	}
	return css + "\n"
}

// highlight returns src as highlighted Starlark; chroma escapes the text.
func highlight(src string) template.HTML {
	it, err := chroma.Coalesce(codeLexer).Tokenise(nil, src)
	if err != nil {
		return template.HTML("<pre>" + escapeText(src) + "</pre>")
	}
	var buf bytes.Buffer
	if err := codeFormatter.Format(&buf, lightStyle, it); err != nil {
		return template.HTML("<pre>" + escapeText(src) + "</pre>")
	}
	return template.HTML(buf.String())
}
