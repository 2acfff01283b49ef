package record

import (
	"bytes"
	"html"
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

// highlight returns src as highlighted Starlark: chroma's tokens, written
// as codeFormatter writes them (formatCode).
func highlight(src string) template.HTML {
	it, err := chroma.Coalesce(codeLexer).Tokenise(nil, src)
	if err != nil {
		return template.HTML("<pre>" + escapeText(src) + "</pre>")
	}
	return template.HTML(formatCode(it.Tokens()))
}

// formatCode writes tokens as chroma's HTML formatter does with classes
// (codeFormatter): a <pre class="chroma"><code>, a line span and a code
// span per line, a span with its class around each token that has one,
// every value escaped. The formatter itself, through fmt for every piece,
// was most of highlighting's time once the lexer was scanStarlark (a
// tenth of a cached 3,000-cell rerun); TestFormatCodeIsChromas holds this
// to its output.
func formatCode(tokens []chroma.Token) string {
	var b strings.Builder
	n := 64
	for _, t := range tokens {
		n += len(t.Value) + 24
	}
	b.Grow(n)
	b.WriteString(`<pre class="` + tokenClass(chroma.PreWrapper) + `"><code>`)
	for _, line := range chroma.SplitTokensIntoLines(tokens) {
		b.WriteString(`<span class="` + tokenClass(chroma.Line) + `"><span class="` + tokenClass(chroma.CodeLine) + `">`)
		for _, t := range line {
			cls := tokenClass(t.Type)
			if cls != "" {
				b.WriteString(`<span class="` + cls + `">`)
			}
			b.WriteString(html.EscapeString(t.Value))
			if cls != "" {
				b.WriteString(`</span>`)
			}
		}
		b.WriteString(`</span></span>`)
	}
	b.WriteString(`</code></pre>`)
	return b.String()
}

// tokenClass is the CSS class chroma gives a token type: its own in
// chroma.StandardTypes, else its nearest parent's (an empty one: none).
func tokenClass(t chroma.TokenType) string {
	for ; t != 0; t = t.Parent() {
		if cls, ok := chroma.StandardTypes[t]; ok {
			return cls
		}
	}
	return chroma.StandardTypes[0]
}
