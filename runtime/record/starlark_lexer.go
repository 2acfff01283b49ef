package record

import "github.com/alecthomas/chroma/v2"

// Code is highlighted with a small Starlark lexer and two styles of our own
// built on chroma's API, rather than chroma's lexer and style registries:
// those initialise about 250 lexers and 70 styles at process start (~100 ms
// measured with GODEBUG=inittrace=1), which was most of a fully cached
// `benchbook run`, and chroma's Python lexer took half the CPU of a cached
// render. Starlark needs few rules.

var starlarkLexer = chroma.MustNewLexer(&chroma.Config{Name: "Starlark", Aliases: []string{"starlark", "star"}},
	func() chroma.Rules {
		return chroma.Rules{
			"root": {
				{Pattern: `\n`, Type: chroma.Text},
				{Pattern: `[^\S\n]+`, Type: chroma.Text},
				{Pattern: `#.*$`, Type: chroma.CommentSingle},
				{Pattern: `(?i)[rb]{0,2}"""(\\\\|\\"|[^"]|"(?!""))*"""`, Type: chroma.LiteralStringDoc},
				{Pattern: `(?i)[rb]{0,2}'''(\\\\|\\'|[^']|'(?!''))*'''`, Type: chroma.LiteralStringDoc},
				{Pattern: `(?i)[rb]{0,2}"(\\\\|\\"|[^"\n])*"`, Type: chroma.LiteralStringDouble},
				{Pattern: `(?i)[rb]{0,2}'(\\\\|\\'|[^'\n])*'`, Type: chroma.LiteralStringSingle},
				{Pattern: `(def)(\s+)([A-Za-z_]\w*)`, Type: chroma.ByGroups(chroma.Keyword, chroma.Text, chroma.NameFunction)},
				{Pattern: chroma.Words(``, `\b`, starlarkKeywords...), Type: chroma.Keyword},
				{Pattern: chroma.Words(``, `\b`, starlarkConstants...), Type: chroma.KeywordConstant},
				{Pattern: chroma.Words(``, `\b`, starlarkBuiltins...), Type: chroma.NameBuiltin},
				{Pattern: `0[xX][0-9a-fA-F]+|0[oO][0-7]+|(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?`, Type: chroma.LiteralNumber},
				{Pattern: `[A-Za-z_]\w*`, Type: chroma.Name},
				{Pattern: `\*\*=?|//=?|[-+*/%&|^<>=!]=?|[~]`, Type: chroma.Operator},
				{Pattern: `[\[\](){},:;.]`, Type: chroma.Punctuation},
				{Pattern: `.`, Type: chroma.Text},
			},
		}
	})

var (
	lightStyle = chroma.MustNewStyle("benchbook-light", chroma.StyleEntries{
		chroma.Comment:         "italic #6a737d",
		chroma.Keyword:         "bold #d73a49",
		chroma.KeywordConstant: "#005cc5",
		chroma.NameBuiltin:     "#6f42c1",
		chroma.NameFunction:    "#6f42c1",
		chroma.LiteralString:   "#032f62",
		chroma.LiteralNumber:   "#005cc5",
		chroma.Operator:        "#d73a49",
	})
	darkStyle = chroma.MustNewStyle("benchbook-dark", chroma.StyleEntries{
		chroma.Comment:         "italic #8b949e",
		chroma.Keyword:         "bold #ff7b72",
		chroma.KeywordConstant: "#79c0ff",
		chroma.NameBuiltin:     "#d2a8ff",
		chroma.NameFunction:    "#d2a8ff",
		chroma.LiteralString:   "#a5d6ff",
		chroma.LiteralNumber:   "#79c0ff",
		chroma.Operator:        "#ff7b72",
	})
)
