package runtime

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// graph is the notebook's dependency DAG over code cells.
type graph struct {
	definer map[string]*CellDef     // global name -> the cell defining it
	up      map[*CellDef][]*CellDef // cells whose names a cell reads
	down    map[*CellDef][]*CellDef
	order   []*CellDef // code cells in dependency order, file order among independent ones
}

// buildGraph links reads to definitions. A name defined twice, a name no
// cell defines and a cycle are errors that name the cells involved.
func buildGraph(nb *Notebook, builtins starlark.StringDict) (*graph, error) {
	g := &graph{definer: map[string]*CellDef{}, up: map[*CellDef][]*CellDef{}, down: map[*CellDef][]*CellDef{}}
	var code []*CellDef
	for _, c := range nb.Cells {
		if c.Markdown {
			continue
		}
		code = append(code, c)
		for _, name := range c.Defines {
			if prev, dup := g.definer[name]; dup {
				return nil, fmt.Errorf("%s:%d: %q is defined in cell %s and again in cell %s: each global belongs to one cell (rename one, or prefix it with _ to keep it local)",
					nb.Path, c.Line, name, prev.Name, c.Name)
			}
			g.definer[name] = c
		}
	}
	for _, c := range code {
		var reads []string
		seen := map[*CellDef]bool{}
		for _, name := range c.Reads {
			d, ok := g.definer[name]
			switch {
			case ok:
				reads = append(reads, name)
				if !seen[d] {
					seen[d] = true
					g.up[c] = append(g.up[c], d)
					g.down[d] = append(g.down[d], c)
				}
			case builtins.Has(name) || starlark.Universe.Has(name):
			default:
				return nil, fmt.Errorf("%s: undefined: %s (in cell %s): %s", c.readPos[name], name, c.Name, undefinedWhy(code, name))
			}
		}
		c.Reads = reads
	}
	return g, g.sort(code)
}

// undefinedWhy explains a name no cell shares: another cell may hold it
// privately (a _name, a top-level loop variable), which reads as defined
// to its author.
func undefinedWhy(code []*CellDef, name string) string {
	for _, c := range code {
		if !slices.Contains(c.private, name) {
			continue
		}
		if strings.HasPrefix(name, "_") {
			return fmt.Sprintf("names starting with _ are private to their cell, and cell %s defines %s: drop the _ there to share it", c.Label(), name)
		}
		return fmt.Sprintf("a top-level loop variable is private to its cell, and cell %s loops over %s: assign it to a name of its own there to share it", c.Label(), name)
	}
	return "no cell defines it and it is not a builtin"
}

// sort orders cells topologically, taking the earliest ready cell in file
// order each time (Kahn's algorithm, the ready cells in a heap by file
// position: scanning the notebook for the first ready cell at every step
// grew with the square of its length), and reports a cycle by its cells.
func (g *graph) sort(code []*CellDef) error {
	pos := make(map[*CellDef]int, len(code))
	indeg := make([]int, len(code))
	ready := &cellHeap{}
	for i, c := range code {
		pos[c] = i
		if indeg[i] = len(g.up[c]); indeg[i] == 0 {
			ready.push(i)
		}
	}
	for len(ready.idx) > 0 {
		next := code[ready.pop()]
		g.order = append(g.order, next)
		for _, d := range g.down[next] {
			if i := pos[d]; indeg[i] > 0 {
				if indeg[i]--; indeg[i] == 0 {
					ready.push(i)
				}
			}
		}
	}
	if len(g.order) < len(code) {
		done := make(map[*CellDef]bool, len(g.order))
		for _, c := range g.order {
			done[c] = true
		}
		return g.cycleError(code, done)
	}
	return nil
}

// cellHeap is a min-heap of cell positions.
type cellHeap struct{ idx []int }

func (h *cellHeap) Len() int           { return len(h.idx) }
func (h *cellHeap) Less(i, j int) bool { return h.idx[i] < h.idx[j] }
func (h *cellHeap) Swap(i, j int)      { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *cellHeap) Push(x any)         { h.idx = append(h.idx, x.(int)) }
func (h *cellHeap) Pop() any {
	n := len(h.idx) - 1
	x := h.idx[n]
	h.idx = h.idx[:n]
	return x
}
func (h *cellHeap) push(i int) { heap.Push(h, i) }
func (h *cellHeap) pop() int   { return heap.Pop(h).(int) }

// cycleError describes one cycle among the cells not yet ordered: each cell
// with the name it reads from the next one and where, starting at the first
// such read, so the message points at a line to edit.
func (g *graph) cycleError(code []*CellDef, done map[*CellDef]bool) error {
	var start *CellDef
	for _, c := range code {
		if !done[c] {
			start = c
			break
		}
	}
	// Walk up-edges among unordered cells until a cell repeats: every such
	// cell has one (its in-degree is not zero), so a repeat must come.
	at := map[*CellDef]int{}
	var path []*CellDef
	for c := start; ; {
		if i, seen := at[c]; seen {
			path = path[i:]
			break
		}
		at[c] = len(path)
		path = append(path, c)
		for _, u := range g.up[c] {
			if !done[u] {
				c = u
				break
			}
		}
	}
	var steps []string
	var first syntax.Position
	for i, c := range path {
		next := path[(i+1)%len(path)]
		name := g.readFrom(c, next)
		if i == 0 {
			first = c.readPos[name]
		}
		steps = append(steps, fmt.Sprintf("%s reads %s from %s (line %d)", c.Name, name, next.Name, c.readPos[name].Line))
	}
	return fmt.Errorf("%s: cells depend on each other in a cycle: %s", first, strings.Join(steps, ", "))
}

// readFrom returns the first name cell c reads that cell up defines.
func (g *graph) readFrom(c, up *CellDef) string {
	for _, name := range c.Reads {
		if g.definer[name] == up {
			return name
		}
	}
	return ""
}
