package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

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
	srcHash string   // hash of the normalized source
	readPos map[string]syntax.Position
	lint    []string // mistakes analysis can see, shown as the cell's warnings
}

// Label names the cell for messages: its name and where it starts.
func (c *CellDef) Label() string { return fmt.Sprintf("%s (line %d)", c.Name, max(c.Header, c.Line)) }

// ParseFile reads and parses a notebook.
func ParseFile(path string) (*Notebook, error) {
	src, err := os.ReadFile(path)
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
		if err := analyse(path, c); err != nil {
			return nil, err
		}
	}
	return nb, nil
}

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

// normalize drops comments, blank lines and trailing spaces so that editing
// prose around code does not change a cell's key.
func normalize(src string) string {
	stripped := stripComments(src)
	var b strings.Builder
	for _, line := range strings.Split(stripped, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// stripComments removes '#' comments outside string literals.
func stripComments(src string) string {
	var out bytes.Buffer
	var quote byte  // current string quote, 0 outside strings
	triple := false // inside a triple-quoted string
	for i := 0; i < len(src); i++ {
		ch := src[i]
		switch {
		case quote == 0 && ch == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				out.WriteByte('\n')
			}
			continue
		case quote == 0 && (ch == '"' || ch == '\''):
			quote = ch
			triple = strings.HasPrefix(src[i:], strings.Repeat(string(ch), 3))
			if triple {
				out.WriteString(src[i : i+3])
				i += 2
				continue
			}
		case quote != 0 && ch == '\\' && i+1 < len(src):
			out.WriteByte(ch)
			i++
			ch = src[i]
		case quote != 0 && ch == quote:
			if !triple {
				quote = 0
			} else if strings.HasPrefix(src[i:], strings.Repeat(string(ch), 3)) {
				out.WriteString(src[i : i+3])
				i += 2
				quote, triple = 0, false
				continue
			}
		case quote != 0 && !triple && ch == '\n':
			quote = 0 // unterminated; the parser reports it
		}
		out.WriteByte(ch)
	}
	return out.String()
}

func hashString(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
