package record

import (
	"fmt"
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
	Servers                                 []string // servers measured: version and non-default settings
}

// cellInput is an input with the cell that read it.
type cellInput struct {
	Cell string
	Input
}

func buildProv(r *Record) provView {
	p, h := r.Prov, r.Prov.Host
	v := provView{
		Host: h.Name, CPU: h.CPU, Kernel: h.Kernel,
		GoVersion: p.GoVersion, Version: p.Version, GitRev: p.GitRev, GitDirty: p.GitDirty,
		CommandLine: p.CommandLine,
		Params:      sortedParams(p.Params),
	}
	v.Inputs, v.Servers = splitServers(allInputs(r.Cells))
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

// splitServers takes the "server" inputs (what a backend said about the
// server a cell measured) out of the inputs table into a list of their
// own, once each.
func splitServers(all []cellInput) (inputs []cellInput, servers []string) {
	seen := map[string]bool{}
	for _, in := range all {
		if in.Kind != "server" {
			inputs = append(inputs, in)
			continue
		}
		if !seen[in.Name] {
			seen[in.Name] = true
			servers = append(servers, in.Name)
		}
	}
	sort.Strings(servers)
	return inputs, servers
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
