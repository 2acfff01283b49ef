package repl

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime"
)

// kernelCell is one Jupyter cell the kernel has been sent, as a cell of the
// kernel's notebook.
type kernelCell struct {
	id       string            // the frontend's cell id; "" when it sent none
	name     string            // from "# %% name", else the cell id
	markdown bool              // "# %% [markdown]"
	options  map[string]string // "cache=false" ...
	code     string            // the code as sent, header line included when it had one
	headed   bool              // code starts with its own "# %%" line

	start int // line of the kernel notebook where code's first line is
}

// kernelNotebook is the notebook a kernel session builds from the cells it
// is sent: each cell once, in the order first executed (a notebook run top
// to bottom gives the file's order), replaced in place when re-executed.
// It is an ordinary notebook to the engine, so the one-definition rule,
// the graph, keys, live state and restores are those of benchbook run.
type kernelNotebook struct {
	path  string // where the notebook would be: the cache, file() and :render go beside it
	cells []*kernelCell
}

// errNotACell is code that is neither headed by "# %%" nor sent with a
// cell id: REPL input, evaluated against the notebook's globals.
var errNotACell = fmt.Errorf("not a notebook cell")

// readCell makes a kernelCell of one execute_request's code.
func readCell(code, cellID string) (*kernelCell, error) {
	first, _, _ := strings.Cut(code, "\n")
	c := &kernelCell{id: cellID, code: code, options: map[string]string{}}
	parts := runtime.SplitCells([]byte(code))
	if strings.HasPrefix(strings.TrimRight(first, "\r"), "# %%") && len(parts) > 0 && parts[0].Header == 1 {
		h := parts[0]
		c.headed, c.markdown, c.options = true, h.Markdown, h.Options
		if h.Named {
			c.name = h.Name
		}
	}
	for _, p := range parts {
		if p.Header > 1 {
			return nil, fmt.Errorf("line %d starts another cell (# %%%%): a Jupyter cell holds one benchbook cell, split it there", p.Header)
		}
	}
	if c.name == "" {
		c.name = cellID
	}
	if c.name == "" {
		return nil, errNotACell
	}
	if strings.ContainsAny(c.name, " \t=[]") {
		return nil, fmt.Errorf("cell id %q cannot name a cell: name it with a first line \"# %%%% NAME\"", c.name)
	}
	return c, nil
}

// put adds c, or replaces the cell it is (the same cell id, else the same
// name), and returns the notebook before the change, to go back to when
// the new one does not parse.
func (k *kernelNotebook) put(c *kernelCell) (undo []*kernelCell, err error) {
	undo = slices.Clone(k.cells)
	at := -1
	for i, old := range k.cells {
		if c.id != "" && old.id == c.id || c.id == "" && old.name == c.name {
			at = i
		}
	}
	for i, old := range k.cells {
		if i != at && old.name == c.name {
			return undo, fmt.Errorf("cell name %q is already used by another cell (In [%s])", c.name, old.label())
		}
	}
	if at < 0 {
		k.cells = append(k.cells, c)
	} else {
		k.cells[at] = c
	}
	return undo, nil
}

// drop removes the cells the frontend deleted; it reports whether any was
// the kernel's.
func (k *kernelNotebook) drop(ids []string) bool {
	n := len(k.cells)
	k.cells = slices.DeleteFunc(k.cells, func(c *kernelCell) bool { return c.id != "" && slices.Contains(ids, c.id) })
	return len(k.cells) != n
}

func (c *kernelCell) label() string {
	if c.id != "" {
		return c.id
	}
	return c.name
}

// source writes the notebook's text: every cell under a header naming it
// (in place of the cell's own "# %%" line, which may not name it), so no
// cell is named by position.
func (k *kernelNotebook) source() []byte {
	var b strings.Builder
	line := 1
	for _, c := range k.cells {
		body := c.code
		c.start = line + 1
		if c.headed { // the cell's own header line is its line 1
			_, body, _ = strings.Cut(body, "\n")
			c.start = line
		}
		body = strings.TrimRight(body, "\n")
		b.WriteString(header(c) + "\n" + body + "\n\n")
		line += 1 + strings.Count(body, "\n") + 2
	}
	return []byte(b.String())
}

func header(c *kernelCell) string {
	h := "# %% " + c.name
	if c.markdown {
		h += " [markdown]"
	}
	keys := make([]string, 0, len(c.options))
	for k := range c.options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h += " " + k + "=" + c.options[k]
	}
	return h
}

// parse builds the engine's notebook of the cells.
func (k *kernelNotebook) parse() (*runtime.Notebook, error) {
	nb, err := runtime.Parse(k.path, k.source())
	if err != nil {
		return nil, fmt.Errorf("%s", k.localize(err.Error()))
	}
	return nb, nil
}

// localize rewrites the notebook's positions (PATH:LINE:COL) in a message
// as positions in the Jupyter cells (NAME:LINE:COL, counting the cell's
// first line as 1), since the kernel's notebook is no file the user sees.
func (k *kernelNotebook) localize(msg string) string {
	re := regexp.MustCompile(regexp.QuoteMeta(k.path) + `:(\d+)(:\d+)?`)
	return re.ReplaceAllStringFunc(msg, func(m string) string {
		sub := re.FindStringSubmatch(m)
		line, _ := strconv.Atoi(sub[1])
		for i := len(k.cells) - 1; i >= 0; i-- {
			if c := k.cells[i]; line >= c.start {
				return fmt.Sprintf("%s:%d%s", c.name, line-c.start+1, sub[2])
			}
		}
		return m
	})
}

// cellNamed returns the cell of that name.
func (k *kernelNotebook) cellNamed(name string) *kernelCell {
	for _, c := range k.cells {
		if c.name == name {
			return c
		}
	}
	return nil
}
