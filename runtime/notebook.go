package runtime

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/resstate"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Notebook is a parsed percent-format notebook: its cells in file order.
type Notebook struct {
	Path  string
	Src   []byte
	Cells []*CellDef
}

// CellDef is one cell as written in the file.
type CellDef struct {
	Name     string            // from "# %% NAME", else "cellN" by position
	Named    bool              // the name was written in the file
	Markdown bool              // "# %% [markdown]" (or [md])
	Options  map[string]string // "cache=false" and other key=value words
	Header   int               // line of the "# %%" marker (0: text before the first marker)
	Line     int               // first line of the body
	Body     string            // the body as written (Markdown: comment marks removed)

	// Filled by analysis (code cells only).
	Reads   []string // globals read from other cells, sorted
	Defines []string // globals defined, sorted
	Loads   []string // modules loaded
	Params  []string // names in param("NAME", ...) calls with a literal name
	// paramDefs are their defaults when literal (paramdefault.go); nil
	// where a call's is not, or two calls differ.
	paramDefs map[string]starlark.Value
	srcHash   string // hash of the normalized source
	readPos   map[string]syntax.Position
	lint      []string   // mistakes analysis can see, shown as the cell's warnings
	private   []string   // globals kept local to the cell: _names and top-level loop variables
	flow      secretFlow // what the source says of secrets (secrets.go), for the redactor
}

// Label names the cell for messages: its name and where it starts.
func (c *CellDef) Label() string { return fmt.Sprintf("%s (line %d)", c.Name, max(c.Header, c.Line)) }

// ParseFile reads and parses a notebook.
func ParseFile(path string) (*Notebook, error) {
	src, err := limits.ReadFile(path, limits.File)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse splits src into cells and analyses each code cell. A syntax error
// names the file, line, column and cell.
func Parse(path string, src []byte) (*Notebook, error) {
	nb := &Notebook{Path: path, Src: src}
	nb.Cells = splitCells(src)
	names := map[string]*CellDef{}
	for i, c := range nb.Cells {
		if !c.Named {
			c.Name = fmt.Sprintf("cell%d", i+1)
		}
		if prev, dup := names[c.Name]; dup {
			return nil, fmt.Errorf("%s:%d: cell name %q already used by the cell at line %d", path, c.Header, c.Name, prev.Header)
		}
		names[c.Name] = c
		if c.Markdown {
			continue
		}
		if err := checkNUL(path, c); err != nil {
			return nil, err
		}
		if err := checkChains(path, c.Line, c.Body); err != nil {
			return nil, cellError(c, err)
		}
		if err := analyse(path, c); err != nil {
			return nil, err
		}
		if err := checkOptions(path, c); err != nil {
			return nil, err
		}
	}
	return nb, nil
}

// cellOptions are the options a cell header takes, and their values.
var cellOptions = map[string][]string{"cache": {"true", "false"}}

// checkOptions refuses an option a code cell's header gives that is not
// one of cellOptions, or a value it does not take: "cahce=false" or
// "cache=maybe" was ignored, and the cell was cached when its author said
// it must not be.
func checkOptions(path string, c *CellDef) error {
	for _, k := range slices.Sorted(maps.Keys(c.Options)) {
		v := c.Options[k]
		values, ok := cellOptions[k]
		switch {
		case !ok:
			var all []string
			for _, name := range slices.Sorted(maps.Keys(cellOptions)) {
				for _, val := range cellOptions[name] {
					all = append(all, name+"="+val)
				}
			}
			return fmt.Errorf("%s:%d: cell %s: unknown option %s=%s (the options: %s)", path, c.Header, c.Name, k, v, strings.Join(all, ", "))
		case !slices.Contains(values, v):
			return fmt.Errorf("%s:%d: cell %s: %s=%s: want %s=%s", path, c.Header, c.Name, k, v, k, strings.Join(values, " or "+k+"="))
		}
	}
	return nil
}

// checkNUL refuses a NUL byte in a code cell: go.starlark.net's scanner
// takes it for the end of the file, so the code after it would silently
// never run while the record showed it.
func checkNUL(path string, c *CellDef) error {
	i := strings.IndexByte(c.Body, 0)
	if i < 0 {
		return nil
	}
	before := c.Body[:i]
	line := c.Line + strings.Count(before, "\n")
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Errorf("%s:%d:%d: NUL byte in the code (in cell %s): Starlark would stop reading there; remove it (in a string, write \\x00)", path, line, col, c.Name)
}

// SplitCells splits src into cells at "# %%" lines as Parse does, without
// analysing any code: unnamed cells have an empty Name. For tools that move
// cells between formats and for the kernel, which reads one Jupyter cell's
// header.
func SplitCells(src []byte) []*CellDef { return splitCells(src) }

func splitCells(src []byte) []*CellDef {
	lines := strings.SplitAfter(string(src), "\n")
	var cells []*CellDef
	cur := &CellDef{Header: 0, Line: 1}
	var body []string
	flush := func() {
		text := strings.Join(body, "")
		if cur.Header > 0 || strings.TrimSpace(text) != "" {
			if cur.Markdown {
				text = unComment(text)
			}
			cur.Body = text
			cells = append(cells, cur)
		}
		body = nil
	}
	for i, line := range lines {
		if h, ok := parseHeader(strings.TrimRight(line, "\r\n")); ok {
			flush()
			h.Header, h.Line = i+1, i+2
			cur = h
			continue
		}
		body = append(body, line)
	}
	flush()
	return cells
}

// parseHeader reads "# %% [NAME] [[markdown]] [key=value ...]".
func parseHeader(line string) (*CellDef, bool) {
	rest, ok := strings.CutPrefix(line, "# %%")
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return nil, false
	}
	c := &CellDef{Options: map[string]string{}}
	for _, w := range strings.Fields(rest) {
		switch {
		case w == "[markdown]" || w == "[md]":
			c.Markdown = true
		case strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]"):
			// Other Jupytext cell types ([raw]) are kept as code-less Markdown.
			c.Markdown = true
		case strings.Contains(w, "="):
			k, v, _ := strings.Cut(w, "=")
			c.Options[k] = strings.Trim(v, `"'`)
		case !c.Named:
			c.Name, c.Named = w, true
		}
	}
	return c, true
}

// unComment turns the comment lines of a Markdown cell back into Markdown.
func unComment(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(trimmed, "# "):
			b.WriteString(trimmed[2:])
		case strings.HasPrefix(trimmed, "#"):
			b.WriteString(trimmed[1:])
		default:
			b.WriteString(line)
		}
	}
	return strings.Trim(b.String(), "\n") + "\n"
}

// normalize returns a cell's source as its key sees it: comments, blank
// lines and trailing blanks removed, outside string literals only, so that
// editing prose around code leaves the key alone while a blank line or a '#'
// inside """...""" still changes it. Where the literals are comes from
// go.starlark.net's own parser, so the key cannot disagree with the language
// about what is a string. Newlines are made "\n" first, as the scanner reads
// "\r\n" and "\r" (a literal's value does not change).
func normalize(src string) string {
	src = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(src)
	inString := stringMask(src)
	var b strings.Builder
	for start := 0; start < len(src); {
		end := strings.IndexByte(src[start:], '\n') + start + 1
		if end == start {
			end = len(src)
		}
		line := src[start:end]
		if src[end-1] == '\n' && inString[end-1] {
			b.WriteString(line) // a multi-line literal goes on: every byte counts
		} else if text := strings.TrimRight(line[:commentStart(line, inString[start:end])], " \t\n"); text != "" {
			b.WriteString(text)
			b.WriteByte('\n')
		}
		start = end
	}
	return b.String()
}

// commentStart is the index of the first '#' of line outside a string
// literal, or len(line).
func commentStart(line string, inString []bool) int {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && !inString[i] {
			return i
		}
	}
	return len(line)
}

// stringMask marks the bytes of src that belong to a string or bytes
// literal, as go.starlark.net's parser found them. Source that does not
// parse has no mask (analysis reports it before any key is made).
func stringMask(src string) []bool {
	mask := make([]bool, len(src))
	f, err := fileOptions.Parse("", src, 0)
	if err != nil {
		return mask
	}
	at := positionOffsets(src)
	mark := func(from, to int) {
		for i := from; i < to && i < len(mask); i++ {
			mask[i] = true
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Literal:
			if n.Token == syntax.STRING || n.Token == syntax.BYTES {
				from, to := n.Span()
				mark(at(from), at(to))
			}
		case *syntax.LoadStmt:
			// load("m", "name"): the names are literals the tree keeps as
			// identifiers placed one column past the literal's start.
			for _, id := range n.From {
				from := max(at(id.NamePos)-1, 0)
				if src[from] != '"' && src[from] != '\'' {
					from++ // r"name": the prefix
				}
				mark(from, quotedEnd(src, from))
			}
		}
		return true
	})
	return mask
}

// positionOffsets returns a function from a parser position (1-based line,
// 1-based column counted in runes) to a byte offset in src.
func positionOffsets(src string) func(syntax.Position) int {
	lineStart := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	return func(p syntax.Position) int {
		if p.Line < 1 || int(p.Line) > len(lineStart) {
			return len(src)
		}
		off := lineStart[p.Line-1]
		for col := int32(1); col < p.Col && off < len(src); col++ {
			_, size := utf8.DecodeRuneInString(src[off:])
			off += size
		}
		return off
	}
}

// quotedEnd returns the offset just past the quoted literal starting at i.
func quotedEnd(src string, i int) int {
	if i >= len(src) || (src[i] != '"' && src[i] != '\'') {
		return i
	}
	q := src[i : i+1]
	if strings.HasPrefix(src[i:], q+q+q) {
		q = q + q + q
	}
	for j := i + len(q); j < len(src); j++ {
		switch {
		case src[j] == '\\':
			j++
		case strings.HasPrefix(src[j:], q):
			return j + len(q)
		case src[j] == '\n' && len(q) == 1:
			return j
		}
	}
	return len(src)
}

func hashString(parts ...string) string { return resstate.HashString(parts...) }
