package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/benchbook/benchbook/cmd/benchbook/internal/report"
	"github.com/benchbook/benchbook/runtime"
)

func cmdCells(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("cells", "Lists a notebook's cells in file order with their status against the cache\n(hit, live, stale, never; unknown until a stale cell above runs), what they read\nand what they define. Executes nothing.")
	var nf notebookFlags
	nf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	path, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(nf.params) == 0 { // the statuses of the last run, whatever its -p
		nf.params = lastParams(path, nf.cacheDir, stderr)
	}
	e, err := openNotebook(ctx, path, &nf, runtime.Options{}, io.Discard)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Plan()
	type cellInfo struct {
		Name    string   `json:"name"`
		Line    int      `json:"line"`
		Kind    string   `json:"kind"`
		Status  string   `json:"status,omitempty"`
		Why     string   `json:"why,omitempty"`
		Reads   []string `json:"reads"`
		Defines []string `json:"defines"`
		Key     string   `json:"key,omitempty"`
	}
	var cells []cellInfo
	for _, c := range e.NB.Cells {
		ci := cellInfo{Name: c.Name, Line: c.Line, Kind: "code", Reads: c.Reads, Defines: c.Defines}
		if c.Markdown {
			ci.Kind = "markdown"
		} else if st := e.CellRun(c.Name); st != nil {
			ci.Status, ci.Why, ci.Key = report.CellStatus(st), st.Why, st.Key
		}
		cells = append(cells, ci)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(cells)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tLINE\tSTATUS\tREADS\tDEFINES\tWHY")
	for _, c := range cells {
		if c.Kind == "markdown" {
			fmt.Fprintf(tw, "%s\t%d\tmarkdown\t\t\t\n", c.Name, c.Line)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", c.Name, c.Line, c.Status, report.Join(c.Reads), report.Join(c.Defines), c.Why)
	}
	return tw.Flush()
}
