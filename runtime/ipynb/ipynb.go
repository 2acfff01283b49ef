// Package ipynb converts notebooks between benchbook's text format and
// Jupyter's nbformat 4. The text format is Jupytext's percent format ("# %%"
// cells), and a notebook moves between the two without losing a cell, a
// name, an option or a line of Markdown:
//
//   - A code cell's "# %% NAME key=value" line stays the first line of its
//     ipynb source: the kernel reads the name and options from the code it
//     is sent, as benchbook reads them from the file. A bare "# %%" is
//     dropped (an unnamed cell needs no header in Jupyter).
//   - A Markdown cell ("# %% [markdown]") is its text without the comment
//     marks, as Jupytext writes it; "[raw]" cells become raw cells.
//   - Text before the first "# %%" is a code cell marked as the preamble,
//     written back without a header.
//   - An unnamed code cell that the benchbook kernel ran under its cell id
//     (JupyterLab and VS Code send the id; the kernel names a cell with no
//     "# %% NAME" after it, and its outputs' metadata.benchbook.cell says
//     so) is written "# %% ID": benchbook run then knows it by the name the
//     kernel cached it under, and the id survives .ipynb -> .star ->
//     .ipynb (a named cell's id is its name). An unnamed cell the kernel
//     did not name so (never run, or run by nbclient, which sends no id)
//     stays a bare "# %%", named by position, and its id is not kept.
//   - Each cell keeps its exact text in metadata.benchbook.text when the
//     canonical form would differ (a Markdown line written "#text", two
//     blank lines between cells): converted back unedited, the file is
//     byte for byte what it was; a cell edited in Jupyter is written in the
//     canonical form.
//
// Outputs do not travel: a .star file has none, the cache holds them.
package ipynb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/benchbook/benchbook/runtime"
)

// Notebook is an nbformat 4 notebook, fields in nbformat's (sorted) order.
type Notebook struct {
	Cells         []Cell         `json:"cells"`
	Metadata      map[string]any `json:"metadata"`
	NBFormat      int            `json:"nbformat"`
	NBFormatMinor int            `json:"nbformat_minor"`
}

// Cell is one nbformat cell. ExecutionCount and Outputs are code cells'
// only: pointers and omitempty keep them off Markdown and raw cells.
type Cell struct {
	CellType       string           `json:"cell_type"`
	ExecutionCount *json.RawMessage `json:"execution_count,omitempty"`
	ID             string           `json:"id,omitempty"`
	Metadata       map[string]any   `json:"metadata"`
	Outputs        *[]any           `json:"outputs,omitempty"`
	Source         Source           `json:"source"`
}

// Source is a cell's text. nbformat allows a string or a list of lines;
// it is written as lines, as Jupyter does.
type Source string

// MarshalJSON writes the text as a list of lines, each with its "\n".
func (s Source) MarshalJSON() ([]byte, error) {
	lines := strings.SplitAfter(string(s), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if lines == nil {
		lines = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "&" and "<" as they are, as Jupyter writes them
	if err := enc.Encode(lines); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// UnmarshalJSON reads a string or a list of strings.
func (s *Source) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Source(one)
		return nil
	}
	var lines []string
	if err := json.Unmarshal(b, &lines); err != nil {
		return fmt.Errorf("cell source: want a string or a list of strings: %w", err)
	}
	*s = Source(strings.Join(lines, ""))
	return nil
}

// meta is what benchbook keeps in a cell's metadata.benchbook.
type meta struct {
	Text     string `json:"text,omitempty"`     // the cell's exact text in the .star file
	Header   string `json:"header,omitempty"`   // a Markdown or raw cell's "# %%" line when not the plain one
	Preamble bool   `json:"preamble,omitempty"` // text before the first "# %%"
}

// KernelMetadata is the notebook metadata that opens a converted notebook
// with the benchbook kernel (benchbook kernel install).
func KernelMetadata() map[string]any {
	return map[string]any{
		"kernelspec": map[string]any{"display_name": "benchbook", "language": "starlark", "name": "benchbook"},
		"language_info": map[string]any{"name": "starlark", "file_extension": ".star", "mimetype": "text/x-python",
			"codemirror_mode": "python", "pygments_lexer": "python"},
	}
}

// SetName records in the notebook's metadata (metadata.benchbook.notebook)
// the name of the .star notebook it was converted from, so that the kernel
// running it, wherever and under whatever file name, caches its cells as
// "benchbook run NAME.star" does (.benchbook/NAME).
func (nb *Notebook) SetName(name string) {
	if nb.Metadata == nil {
		nb.Metadata = map[string]any{}
	}
	bb, _ := nb.Metadata["benchbook"].(map[string]any)
	if bb == nil {
		bb = map[string]any{}
	}
	bb["notebook"] = name
	nb.Metadata["benchbook"] = bb
}

// Name is the name SetName recorded: "" when none (a notebook made in
// Jupyter), or when it is not a plain file name.
func (nb *Notebook) Name() string {
	bb, _ := nb.Metadata["benchbook"].(map[string]any)
	name, _ := bb["notebook"].(string)
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return ""
	}
	return name
}

// FromPercent converts a percent-format notebook to nbformat 4.5.
func FromPercent(src []byte) *Notebook {
	nb := &Notebook{Cells: []Cell{}, Metadata: KernelMetadata(), NBFormat: 4, NBFormatMinor: 5}
	ids := map[string]bool{}
	raws := splitRaw(src)
	for i, raw := range raws {
		c := fromRaw(raw, i == 0, i == len(raws)-1)
		c.ID = uniqueID(ids, raw.name, i+1)
		nb.Cells = append(nb.Cells, c)
	}
	return nb
}

// rawCell is one cell's exact text and what its header says.
type rawCell struct {
	text     string // header line (if any) through the line before the next header
	header   string // the "# %%" line, "" for the preamble
	body     string // the lines after the header
	name     string // from the header, "" when unnamed
	kind     string // "code", "markdown" or "raw"
	preamble bool
}

// splitRaw cuts src at the cells runtime.SplitCells finds, keeping every
// byte: concatenating the texts gives src back.
func splitRaw(src []byte) []rawCell {
	lines := strings.SplitAfter(string(src), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var starts []int // 0-based line of each cell's first line
	defs := runtime.SplitCells(src)
	for _, d := range defs {
		starts = append(starts, max(d.Header, 1)-1)
	}
	if len(starts) > 0 && starts[0] > 0 {
		// Blank lines before the first header: kept with the first cell.
		starts[0] = 0
	}
	var cells []rawCell
	for i, d := range defs {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		text := strings.Join(lines[starts[i]:end], "")
		c := rawCell{text: text, name: d.Name, kind: "code", preamble: d.Header == 0}
		if c.preamble {
			c.body = text
		} else {
			c.header, c.body = cutHeader(text, d.Header-1-starts[i])
		}
		if d.Markdown {
			c.kind = "markdown"
			if strings.Contains(c.header, "[raw]") {
				c.kind = "raw"
			}
		}
		cells = append(cells, c)
	}
	return cells
}

// cutHeader returns a cell's header line (the k-th line of its text) and
// the lines after it. Blank lines before the header (before a file's first
// cell) are in neither: the cell's exact text keeps them.
func cutHeader(text string, k int) (header, body string) {
	lines := strings.SplitAfter(text, "\n")
	return strings.TrimRight(lines[k], "\r\n"), strings.Join(lines[k+1:], "")
}

// fromRaw makes the ipynb cell of one .star cell, in the canonical form,
// with the exact text kept when the canonical form would not give it back.
func fromRaw(raw rawCell, first, last bool) Cell {
	c := Cell{CellType: raw.kind, Metadata: map[string]any{}}
	m := meta{Preamble: raw.preamble}
	body := strings.TrimRight(raw.body, "\n")
	switch raw.kind {
	case "code":
		src := body
		if raw.header != "" && strings.TrimSpace(strings.TrimPrefix(raw.header, "# %%")) != "" {
			src = raw.header + "\n" + body
		}
		c.Source = Source(strings.TrimRight(src, "\n"))
		null := json.RawMessage("null")
		c.ExecutionCount, c.Outputs = &null, &[]any{}
	default:
		c.Source = Source(uncomment(body))
		if raw.header != "# %% ["+raw.kind+"]" {
			m.Header = raw.header
		}
	}
	if canonical(c, m, first, last) != raw.text {
		m.Text = raw.text
	}
	if m != (meta{}) {
		c.Metadata["benchbook"] = m
	}
	return c
}

// uncomment turns the comment lines of a Markdown cell into Markdown, as
// Jupytext reads them: "# " or "#" removed.
func uncomment(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "# "):
			lines[i] = l[2:]
		case strings.HasPrefix(l, "#"):
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// comment writes Markdown as the comment lines of a cell.
func comment(md string) string {
	if md == "" {
		return ""
	}
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = "#"
		} else {
			lines[i] = "# " + l
		}
	}
	return strings.Join(lines, "\n")
}

var validID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// uniqueID is a cell's nbformat id: its name when it has a usable one,
// else "cellN" as benchbook names it by position.
func uniqueID(used map[string]bool, name string, pos int) string {
	id := name
	if !validID.MatchString(id) || used[id] {
		id = fmt.Sprintf("cell%d", pos)
	}
	for n := 2; used[id]; n++ {
		id = fmt.Sprintf("cell%d-%d", pos, n)
	}
	used[id] = true
	return id
}

// Marshal writes a notebook as Jupyter does: one-space indents, sorted
// keys, a final newline.
func Marshal(nb *Notebook) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(nb); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unmarshal reads an nbformat 4 notebook.
func Unmarshal(b []byte) (*Notebook, error) {
	var nb Notebook
	if err := json.Unmarshal(b, &nb); err != nil {
		return nil, fmt.Errorf("not an ipynb notebook: %w", err)
	}
	if nb.NBFormat != 4 {
		return nil, fmt.Errorf("nbformat %d: only nbformat 4 notebooks are read", nb.NBFormat)
	}
	for i, c := range nb.Cells {
		switch c.CellType {
		case "code", "markdown", "raw":
		default:
			return nil, fmt.Errorf("cell %d: unknown cell_type %q", i+1, c.CellType)
		}
	}
	return &nb, nil
}

// ToPercent converts a notebook to the percent format. Empty cells (the
// blank one a Jupyter notebook ends with) are left out.
func ToPercent(nb *Notebook) []byte {
	var cells []Cell
	for _, c := range nb.Cells {
		if strings.TrimSpace(string(c.Source)) != "" || readMeta(c).Text != "" {
			cells = append(cells, c)
		}
	}
	var b strings.Builder
	for i, c := range cells {
		if name := kernelName(c); name != "" {
			c.Source = Source(named(string(c.Source), name))
		}
		m := readMeta(c)
		if m.Text != "" && sameCell(c, m.Text) {
			b.WriteString(m.Text) // as it was in the file, byte for byte
			continue
		}
		b.WriteString(canonical(c, m, i == 0, i == len(cells)-1))
	}
	return []byte(b.String())
}

// canonical is a cell's text in the form this package writes: its header
// line, its code or commented Markdown, a newline and, between cells, one
// blank line.
func canonical(c Cell, m meta, first, last bool) string {
	text := strings.TrimRight(string(c.Source), "\n")
	switch {
	case c.CellType != "code":
		h := m.Header
		if h == "" {
			h = "# %% [" + c.CellType + "]"
		}
		if body := comment(text); body != "" {
			h += "\n" + body
		}
		text = h
	case m.Preamble && first, startsCell(text):
	default:
		text = "# %%\n" + text
	}
	if last {
		return text + "\n"
	}
	return text + "\n\n"
}

// sameCell says whether c is still the cell whose exact text was kept.
func sameCell(c Cell, text string) bool {
	cells := splitRaw([]byte(text))
	if len(cells) != 1 {
		return false
	}
	back := fromRaw(cells[0], false, false)
	return back.CellType == c.CellType && back.Source == c.Source
}

// kernelName is the name the kernel gave a code cell whose source names
// none: its id, when an output's metadata.benchbook.cell says the kernel
// ran it under that id; else "".
func kernelName(c Cell) string {
	if c.CellType != "code" || c.Outputs == nil || !validID.MatchString(c.ID) {
		return ""
	}
	if defs := runtime.SplitCells([]byte(c.Source)); len(defs) > 0 && (defs[0].Named || defs[0].Markdown) {
		return ""
	}
	for _, out := range *c.Outputs {
		o, _ := out.(map[string]any)
		md, _ := o["metadata"].(map[string]any)
		bb, _ := md["benchbook"].(map[string]any)
		if bb["cell"] == c.ID {
			return c.ID
		}
	}
	return ""
}

// named gives code a header naming it: its own "# %%" line (options
// kept) with the name added, or a new one.
func named(code, name string) string {
	if !startsCell(code) {
		return "# %% " + name + "\n" + code
	}
	first, rest, _ := strings.Cut(code, "\n")
	first = "# %% " + name + strings.TrimRight(strings.TrimPrefix(first, "# %%"), " \t\r")
	if rest == "" && !strings.Contains(code, "\n") {
		return first
	}
	return first + "\n" + rest
}

func startsCell(src string) bool {
	first, _, _ := strings.Cut(src, "\n")
	rest, ok := strings.CutPrefix(first, "# %%")
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

func readMeta(c Cell) meta {
	var m meta
	raw, ok := c.Metadata["benchbook"]
	if !ok {
		return m
	}
	b, err := json.Marshal(raw)
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}
