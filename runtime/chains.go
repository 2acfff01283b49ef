package runtime

import (
	"fmt"
	"unicode/utf8"
)

// maxChain is the longest run of postfix operations (x[0], x.a, f(x)) or
// of binary operators (1 + 1 + ...) one expression may chain at one
// bracket level. go.starlark.net's parser refuses brackets nested past
// 1000 ("excessive nesting") but builds a chain in a loop, into a tree as
// deep as the chain is long; every later walk of that tree (the string
// mask, the resolver, the compiler) recurses through it, and a 2-million
// link chain in a 6 MB notebook overflowed Go's stack, a crash no error
// names. A chain is bounded like nesting, at the same figure, so that the
// deepest tree a notebook can make (the parser lets about 75 brackets nest,
// each holding 1000-link chains) stays well within the stack.
const maxChain = 1000

// checkChains refuses source whose postfix or operator chains pass
// maxChain, with the position of the link that passed it. It reads the
// text as go.starlark.net's scanner does (comments, string literals of
// every quoting, line joins) without building a tree, so a hostile file
// is refused before the parser allocates one.
func checkChains(path string, line0 int, src string) error {
	s := chainScanner{src: src, line: line0}
	return s.run(path)
}

// chainScanner walks source text keeping, per open bracket, how long the
// current postfix chain and operator chain are.
type chainScanner struct {
	src       string
	i         int
	line, col int   // of src[i]; col counts runes from 0
	levels    []int // postfix chain length of each open bracket's expression ...
	ops       []int // ... and its operator chain
	operand   bool  // the last token ended an operand: '[', '(' and '.' chain onto it
}

func (s *chainScanner) run(path string) error {
	s.levels, s.ops = []int{0}, []int{0}
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '\n':
			if len(s.levels) == 1 {
				s.levels[0], s.ops[0], s.operand = 0, 0, false // a statement ends
			}
			s.next()
		case c == '\\':
			s.next() // a line join: the newline after it ends nothing
			if s.i < len(s.src) && s.src[s.i] == '\r' {
				s.next()
			}
			if s.i < len(s.src) && s.src[s.i] == '\n' {
				s.next()
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			s.next()
		case c == '#':
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.next()
			}
		case c == '"' || c == '\'':
			s.skipString()
			s.operandEnd()
		case isIdentStart(c):
			if s.stringPrefix() {
				continue
			}
			line, col := s.line, s.col
			word := s.word()
			switch {
			case word == "and" || word == "or" || word == "not":
				if err := s.countOp(path, line, col); err != nil {
					return err
				}
			case chainKeywords[word]:
				s.reset()
			default:
				s.operandEnd()
			}
		case c >= '0' && c <= '9' || c == '.' && s.i+1 < len(s.src) && s.src[s.i+1] >= '0' && s.src[s.i+1] <= '9' && !s.operand:
			s.number()
			s.operandEnd()
		case c == '.':
			if err := s.link(path); err != nil {
				return err
			}
			s.next()
			s.operand = false
			s.skipBlanks()
			if s.i < len(s.src) && isIdentStart(s.src[s.i]) {
				s.word()
				s.operand = true
			}
		case c == '(' || c == '[' || c == '{':
			if c != '{' && s.operand {
				if err := s.link(path); err != nil {
					return err
				}
			}
			s.next()
			s.levels, s.ops = append(s.levels, 0), append(s.ops, 0)
			s.operand = false
		case c == ')' || c == ']' || c == '}':
			s.next()
			if len(s.levels) > 1 {
				s.levels, s.ops = s.levels[:len(s.levels)-1], s.ops[:len(s.ops)-1]
			}
			s.operand = true
		case c == ',' || c == ';' || c == ':' || c == '=' && !s.comparison():
			s.reset()
			s.next()
		default:
			if err := s.operator(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// chainKeywords end an expression (or start a clause of one) as far as
// chains go: "a if b else c" chains nothing across its keywords.
var chainKeywords = map[string]bool{
	"in": true, "if": true, "else": true, "elif": true,
	"for": true, "lambda": true, "def": true, "return": true, "while": true, "load": true,
	"pass": true, "break": true, "continue": true,
}

func (s *chainScanner) next() {
	if s.src[s.i] == '\n' {
		s.line, s.col = s.line+1, 0
		s.i++
		return
	}
	_, n := utf8.DecodeRuneInString(s.src[s.i:])
	s.i += n
	s.col++
}

func (s *chainScanner) top() int { return len(s.levels) - 1 }

func (s *chainScanner) operandEnd() {
	if !s.operand {
		s.levels[s.top()] = 0 // a new primary starts its own chain
	}
	s.operand = true
}

func (s *chainScanner) reset() {
	s.levels[s.top()], s.ops[s.top()], s.operand = 0, 0, false
}

// link counts one postfix operation onto the current chain.
func (s *chainScanner) link(path string) error {
	s.levels[s.top()]++
	if s.levels[s.top()] > maxChain {
		return fmt.Errorf("%s:%d:%d: excessive nesting: more than %d indexes, calls or attributes chained in one expression (x[0][0]...)", path, s.line, s.col+1, maxChain)
	}
	return nil
}

// operator reads one operator token: a binary one lengthens the operator
// chain of the current level; unary ones (-x, not x) are nested in the tree
// too, so they count as well.
func (s *chainScanner) operator(path string) error {
	line, col := s.line, s.col
	for n := 3; n >= 1; n-- {
		if s.i+n <= len(s.src) && operators[s.src[s.i:s.i+n]] {
			for range n {
				s.next()
			}
			if s.src[s.i-1] == '=' && n >= 2 && !comparisonOps[s.src[s.i-n:s.i]] {
				s.reset() // an augmented assignment: "x += 1" starts a new expression
				return nil
			}
			return s.countOp(path, line, col)
		}
	}
	s.next() // a byte the scanner will refuse: not ours to judge
	s.operand = false
	return nil
}

// countOp counts an operator (at line:col) onto the current level's chain.
func (s *chainScanner) countOp(path string, line, col int) error {
	s.operand = false
	s.ops[s.top()]++
	if s.ops[s.top()] > maxChain {
		return fmt.Errorf("%s:%d:%d: excessive nesting: more than %d operators chained in one expression (1 + 1 + ...)", path, line, col+1, maxChain)
	}
	return nil
}

var operators = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "//": true, "%": true, "**": true,
	"&": true, "|": true, "^": true, "~": true, "<<": true, ">>": true,
	"<": true, ">": true, "<=": true, ">=": true, "==": true, "!=": true,
	"+=": true, "-=": true, "*=": true, "/=": true, "//=": true, "%=": true,
	"&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true,
}

var comparisonOps = map[string]bool{"<=": true, ">=": true, "==": true, "!=": true}

// comparison says whether the '=' at s.i starts "==".
func (s *chainScanner) comparison() bool {
	return s.i+1 < len(s.src) && s.src[s.i+1] == '='
}

func (s *chainScanner) skipBlanks() {
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t' || s.src[s.i] == '\\' || s.src[s.i] == '\r' || s.src[s.i] == '\n' && len(s.levels) > 1) {
		s.next()
	}
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isIdentByte(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

func (s *chainScanner) word() string {
	from := s.i
	for s.i < len(s.src) && isIdentByte(s.src[s.i]) {
		s.next()
	}
	return s.src[from:s.i]
}

// stringPrefix reads a literal with a prefix (r"...", b'...', rb"...") and
// reports whether there was one.
func (s *chainScanner) stringPrefix() bool {
	j := s.i
	for j < len(s.src) && j-s.i < 2 && (s.src[j]|0x20 == 'r' || s.src[j]|0x20 == 'b') {
		j++
	}
	if j == s.i || j >= len(s.src) || s.src[j] != '"' && s.src[j] != '\'' {
		return false
	}
	for s.i < j {
		s.next()
	}
	s.skipString()
	s.operandEnd()
	return true
}

// skipString moves past a quoted literal starting at s.i: one or three
// quotes; a backslash escapes the next byte, in raw literals too (as far
// as where the literal ends goes). An unterminated one runs to the end.
func (s *chainScanner) skipString() {
	q := s.src[s.i]
	triple := s.i+2 < len(s.src) && s.src[s.i+1] == q && s.src[s.i+2] == q
	n := 1
	if triple {
		n = 3
	}
	for range n {
		s.next()
	}
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '\\':
			s.next()
			if s.i < len(s.src) {
				s.next()
			}
			continue
		case c == '\n' && !triple:
			return // the scanner refuses it
		case c == q && (!triple || s.i+2 < len(s.src) && s.src[s.i+1] == q && s.src[s.i+2] == q):
			for range n {
				s.next()
			}
			return
		}
		s.next()
	}
}

// number moves past a numeric literal (digits, letters of a base or an
// exponent, a fraction's dot, an exponent's sign).
func (s *chainScanner) number() {
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case isIdentByte(c) || c == '.':
		case (c == '+' || c == '-') && s.i > 0 && s.src[s.i-1]|0x20 == 'e' && !hexLiteralAt(s.src, s.i):
		default:
			return
		}
		s.next()
	}
}

// hexLiteralAt says whether the number ending just before i is hex (0x1e+1
// is 0x1e plus 1, not an exponent).
func hexLiteralAt(src string, i int) bool {
	j := i - 1
	for j > 0 && isIdentByte(src[j-1]) {
		j--
	}
	return j+1 < len(src) && src[j] == '0' && src[j+1]|0x20 == 'x'
}
