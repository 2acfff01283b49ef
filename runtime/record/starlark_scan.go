package record

import (
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
)

// codeLexer is what highlight tokenises with: scanStarlark where it can say
// exactly what starlarkLexer would, else starlarkLexer itself.
//
// starlarkLexer runs its rules as regular expressions (dlclark/regexp2, one
// tried after another at every token): that was a third of a cached rerun's
// CPU and a sixth of a cold run's at 3,000 cells (pprof, issue 38), for
// sources that are nearly all ASCII identifiers, numbers and operators.
// scanStarlark applies the same rules, in the same order, as byte tests. It
// gives up (and the regular expressions run) where their Unicode classes
// or backtracking would matter: a non-ASCII character outside a string or
// comment, a string that does not end, invalid UTF-8. The tests hold it to
// the regular expressions' tokens on every notebook of the repository and
// on fuzzed sources.
var codeLexer chroma.Lexer = scanningLexer{starlarkLexer}

type scanningLexer struct{ chroma.Lexer }

func (l scanningLexer) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	if options != nil { // the defaults (nil) are the ones scanStarlark follows
		return l.Lexer.Tokenise(options, text)
	}
	if toks, ok := scanStarlark(text); ok {
		return chroma.Literator(toks...), nil
	}
	return l.Lexer.Tokenise(nil, text)
}

// scanStarlark tokenises src as starlarkLexer's rules do (one token per
// rule match, def's three groups as three), or says it cannot.
func scanStarlark(src string) ([]chroma.Token, bool) {
	if !utf8.ValidString(src) {
		return nil, false // the lexer reads runes: each bad byte becomes U+FFFD
	}
	text := ensureLF(src)
	toks := make([]chroma.Token, 0, len(text)/3)
	emit := func(t chroma.TokenType, from, to int) {
		toks = append(toks, chroma.Token{Type: t, Value: text[from:to]})
	}
	for pos := 0; pos < len(text); {
		c := text[pos]
		if c >= utf8.RuneSelf {
			return nil, false // \s, \w, \d and \b are Unicode classes to the regexps
		}
		switch {
		case c == '\n':
			emit(chroma.Text, pos, pos+1)
			pos++
			continue
		case isBlank(c):
			end := pos
			for end < len(text) && isBlank(text[end]) {
				end++
			}
			emit(chroma.Text, pos, end)
			pos = end
			continue
		case c == '#': // `#.*$`, multi-line: to the end of the line
			end := strings.IndexByte(text[pos:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += pos
			}
			emit(chroma.CommentSingle, pos, end)
			pos = end
			continue
		}
		if t, end, ok := scanString(text, pos); ok {
			emit(t, pos, end)
			pos = end
			continue
		} else if end < 0 {
			return nil, false
		}
		if kw, ws, name, end := scanDef(text, pos); end > 0 {
			emit(chroma.Keyword, pos, kw)
			emit(chroma.Text, kw, ws)
			emit(chroma.NameFunction, ws, name)
			pos = end
			continue
		} else if end < 0 {
			return nil, false
		}
		word := wordEnd(text, pos)
		if word < len(text) && text[word] >= utf8.RuneSelf {
			return nil, false // the word may go on, in \w's Unicode sense
		}
		if w := text[pos:word]; w != "" {
			if t, ok := words[w]; ok {
				emit(t, pos, word)
				pos = word
				continue
			}
		}
		if end := numberEnd(text, pos); end > pos {
			if end < len(text) && text[end] >= utf8.RuneSelf {
				return nil, false
			}
			emit(chroma.LiteralNumber, pos, end)
			pos = end
			continue
		}
		if isIdentStart(c) {
			emit(chroma.Name, pos, word)
			pos = word
			continue
		}
		if end := operatorEnd(text, pos); end > pos {
			emit(chroma.Operator, pos, end)
			pos = end
			continue
		}
		if strings.IndexByte("[](){},:;.", c) >= 0 {
			emit(chroma.Punctuation, pos, pos+1)
		} else {
			emit(chroma.Text, pos, pos+1)
		}
		pos++
	}
	return toks, true
}

// ensureLF is chroma's: CRLF and a lone CR become LF before the rules run.
func ensureLF(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '\r':
			b = append(b, s[i])
		case i+1 < len(s) && s[i+1] == '\n':
		default:
			b = append(b, '\n')
		}
	}
	return string(b)
}

// isBlank is [^\S\n] for ASCII: the whitespace of \s but the newline (no
// CR is left after ensureLF).
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

func isSpace(c byte) bool { return isBlank(c) || c == '\n' }

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isWord(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// wordEnd is where the run of ASCII word characters from pos ends.
func wordEnd(text string, pos int) int {
	for pos < len(text) && isWord(text[pos]) {
		pos++
	}
	return pos
}

// The words of the lexer's keyword, constant and builtin rules, one list each
// for the regexp lexer and the scanner.
var (
	starlarkKeywords  = []string{"and", "break", "continue", "elif", "else", "for", "if", "in", "lambda", "load", "not", "or", "pass", "return", "while"}
	starlarkConstants = []string{"True", "False", "None"}
	starlarkBuiltins  = []string{"abs", "any", "all", "bool", "bytes", "dict", "dir", "enumerate", "fail", "float", "getattr", "hasattr", "hash", "int", "len", "list", "max", "min", "print", "range", "repr", "reversed", "set", "sorted", "str", "tuple", "type", "zip",
		"param", "file", "memo", "struct", "md", "table", "show", "compare", "compare_profiles", "verdict", "equivalent", "bars", "build"}
)

// words are the keyword, constant and builtin rules: `(w1|w2|...)\b`, which
// at the start of a word match exactly when the whole word is one of them.
var words = func() map[string]chroma.TokenType {
	m := map[string]chroma.TokenType{}
	for _, w := range starlarkKeywords {
		m[w] = chroma.Keyword
	}
	for _, w := range starlarkConstants {
		m[w] = chroma.KeywordConstant
	}
	for _, w := range starlarkBuiltins {
		m[w] = chroma.NameBuiltin
	}
	return m
}()

// scanString tries the four string rules at pos, in their order:
// `(?i)[rb]{0,2}` then """...""", ”'...”', "..." or '...'. It returns the
// rule's token type and end; ok false with end 0 when no rule starts here,
// end -1 when one starts but its closing quote is not where a greedy scan
// finds it (the regexp would backtrack: left to it).
func scanString(text string, pos int) (t chroma.TokenType, end int, ok bool) {
	q := pos
	for q < len(text) && q-pos < 2 && strings.IndexByte("rRbB", text[q]) >= 0 {
		q++
	}
	if q >= len(text) || text[q] != '"' && text[q] != '\'' {
		return 0, 0, false
	}
	quote := text[q]
	if strings.HasPrefix(text[q:], strings.Repeat(string(quote), 3)) {
		if end := tripleEnd(text, q+3, quote); end > 0 {
			return chroma.LiteralStringDoc, end, true
		}
		return 0, -1, false
	}
	if end := lineEnd(text, q+1, quote); end > 0 {
		if quote == '"' {
			return chroma.LiteralStringDouble, end, true
		}
		return chroma.LiteralStringSingle, end, true
	}
	return 0, -1, false
}

// tripleEnd scans `(\\\\|\\Q|[^Q]|Q(?!QQ))*QQQ` greedily from i (Q the
// quote): the end of the closing quotes, or -1.
func tripleEnd(text string, i int, q byte) int {
	for i < len(text) {
		switch c := text[i]; {
		case c == '\\' && i+1 < len(text) && (text[i+1] == '\\' || text[i+1] == q):
			i += 2
		case c != q:
			i++
		case i+2 < len(text) && text[i+1] == q && text[i+2] == q:
			return i + 3
		default:
			i++
		}
	}
	return -1
}

// lineEnd scans `(\\\\|\\Q|[^Q\n])*Q` greedily from i: the end of the
// closing quote, or -1.
func lineEnd(text string, i int, q byte) int {
	for i < len(text) {
		switch c := text[i]; {
		case c == '\\' && i+1 < len(text) && (text[i+1] == '\\' || text[i+1] == q):
			i += 2
		case c == q:
			return i + 1
		case c == '\n':
			return -1
		default:
			i++
		}
	}
	return -1
}

// scanDef matches `(def)(\s+)([A-Za-z_]\w*)` at pos: the ends of its three
// groups, end 0 if it does not match, -1 if Unicode could decide it.
func scanDef(text string, pos int) (kw, ws, name, end int) {
	if !strings.HasPrefix(text[pos:], "def") {
		return 0, 0, 0, 0
	}
	kw = pos + 3
	ws = kw
	for ws < len(text) && isSpace(text[ws]) {
		ws++
	}
	if ws < len(text) && text[ws] >= utf8.RuneSelf {
		return 0, 0, 0, -1
	}
	if ws == kw || ws == len(text) || !isIdentStart(text[ws]) {
		return 0, 0, 0, 0
	}
	name = wordEnd(text, ws)
	if name < len(text) && text[name] >= utf8.RuneSelf {
		return 0, 0, 0, -1
	}
	return kw, ws, name, name
}

// numberEnd matches
// `0[xX][0-9a-fA-F]+|0[oO][0-7]+|(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?` at
// pos: its end, or pos.
func numberEnd(text string, pos int) int {
	run := func(i int, ok func(byte) bool) int {
		for i < len(text) && ok(text[i]) {
			i++
		}
		return i
	}
	if strings.HasPrefix(text[pos:], "0x") || strings.HasPrefix(text[pos:], "0X") {
		if end := run(pos+2, isHex); end > pos+2 {
			return end
		}
	}
	if strings.HasPrefix(text[pos:], "0o") || strings.HasPrefix(text[pos:], "0O") {
		if end := run(pos+2, isOctal); end > pos+2 {
			return end
		}
	}
	end := run(pos, isDigit)
	switch {
	case end > pos && end < len(text) && text[end] == '.':
		end = run(end+1, isDigit)
	case end == pos && pos+1 < len(text) && text[pos] == '.' && isDigit(text[pos+1]):
		end = run(pos+1, isDigit)
	case end == pos:
		return pos
	}
	if end < len(text) && (text[end] == 'e' || text[end] == 'E') {
		d := end + 1
		if d < len(text) && (text[d] == '+' || text[d] == '-') {
			d++
		}
		if e := run(d, isDigit); e > d {
			end = e
		}
	}
	return end
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// operatorEnd matches `\*\*=?|//=?|[-+*/%&|^<>=!]=?|[~]` at pos: its end,
// or pos.
func operatorEnd(text string, pos int) int {
	end := pos
	switch {
	case strings.HasPrefix(text[pos:], "**"), strings.HasPrefix(text[pos:], "//"):
		end = pos + 2
	case strings.IndexByte("-+*/%&|^<>=!", text[pos]) >= 0:
		end = pos + 1
	case text[pos] == '~':
		return pos + 1
	default:
		return pos
	}
	if end < len(text) && text[end] == '=' {
		end++
	}
	return end
}
