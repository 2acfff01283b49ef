package record

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/runtime/bytesize"
)

// provView is the provenance section: where, with what and from what the
// record was made.
type provView struct {
	Host, CPU, Cores, Memory, Kernel, Load  string
	GoVersion, Version, GitRev, CommandLine string
	GitDirty                                bool
	Params                                  [][2]string
	Inputs                                  []cellInput
	// Targets are what the notebook measured, each once with the cells
	// that named it: a backend's own line (a container's image and digest,
	// a process's command and binary hash, a server's version and
	// settings).
	Targets []target
}

// cellInput is an input with the cell that read it.
type cellInput struct {
	Cell string
	Input
}

// ShownHash is the hash as the inputs table shows it: a long one cut to
// its first characters (the whole in the cell's title and the JSON
// record), so the table keeps one line a row.
func (c cellInput) ShownHash() string {
	keep := 16 // hex digits enough to tell two apart
	if i := strings.Index(c.Hash, ":"); i >= 0 && i < 8 {
		keep += i + 1 // "sha256:" does not count
	}
	if r := []rune(c.Hash); len(r) > keep+4 {
		return string(r[:keep]) + "…"
	}
	return c.Hash
}

// target is one thing the notebook measured and the cells that said so.
type target struct {
	What  string
	Cells string
}

func buildProv(r *Record) provView {
	p, h := r.Prov, r.Prov.Host
	v := provView{
		Host: h.Name, CPU: h.CPU, Kernel: h.Kernel,
		GoVersion: p.GoVersion, Version: p.Version, GitRev: p.GitRev, GitDirty: p.GitDirty,
		CommandLine: p.CommandLine,
		Params:      sortedParams(p.Params),
	}
	v.Inputs, v.Targets = splitTargets(allInputs(r.Cells))
	if h.Cores > 0 {
		v.Cores = fmt.Sprint(h.Cores)
	}
	if h.MemBytes > 0 {
		v.Memory = bytesize.Format(int64(h.MemBytes))
	}
	if h.Load != [3]float64{} {
		v.Load = fmt.Sprintf("%.2f %.2f %.2f", h.Load[0], h.Load[1], h.Load[2])
	}
	return v
}

// splitTargets takes the "server" inputs (what a backend said about the
// target a cell started or measured) out of the inputs table into a table
// of their own: one row per distinct target, in the order the record met
// them, with the cells that named it.
func splitTargets(all []cellInput) (inputs []cellInput, targets []target) {
	index := map[string]int{}
	var cells [][]string
	for _, in := range all {
		if in.Kind != "server" {
			inputs = append(inputs, in)
			continue
		}
		i, seen := index[in.Name]
		if !seen {
			i = len(targets)
			index[in.Name] = i
			targets = append(targets, target{What: in.Name})
			cells = append(cells, nil)
		}
		if !slices.Contains(cells[i], in.Cell) {
			cells[i] = append(cells[i], in.Cell)
		}
	}
	for i := range targets {
		targets[i].Cells = strings.Join(cells[i], ", ")
	}
	return inputs, targets
}

func sortedParams(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func allInputs(cells []Cell) []cellInput {
	var out []cellInput
	for _, c := range cells {
		for _, in := range c.Inputs {
			out = append(out, cellInput{Cell: c.Name, Input: in})
		}
	}
	return out
}

// withoutTitleHeading returns the cells with the notebook's title heading
// ("# Title" opening the first Markdown cell, where the title was taken
// from) removed, since the record's header already shows it.
func withoutTitleHeading(cells []Cell, title string) []Cell {
	for i, c := range cells {
		if !c.Markdown {
			return cells
		}
		trimmed := strings.TrimLeft(c.Source, "\n")
		if strings.TrimSpace(trimmed) == "" {
			continue
		}
		first, rest, _ := strings.Cut(trimmed, "\n")
		text, ok := strings.CutPrefix(first, "# ")
		if !ok || strings.TrimSpace(strings.TrimRight(text, "# ")) != strings.TrimSpace(title) {
			return cells
		}
		out := append([]Cell(nil), cells...)
		out[i].Source = rest
		return out
	}
	return cells
}
