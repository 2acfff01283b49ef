package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
)

// indexRow is one investigation in the decision table: the notebook, and
// the decision row its record opens with (metric.DecisionRow, read back
// from the verdict's JSON), so the index and the record say one thing.
type indexRow struct {
	Notebook   string
	Title      string
	Hypothesis string
	Row        decisionRow
	Index      float64   // the headline's index, before = 100 (the bar); 0 when unknown
	Status     string    // kept / reverted / no effect / open / ...
	Decided    time.Time // when the cell that made the verdict was computed; zero when never
}

// decisionRow is the verdict's row as its JSON carries it.
type decisionRow struct {
	Candidate, Metric, Change, Interval, Gain, Cost, Evidence, Busy string
}

func readDecisionRow(m map[string]any) decisionRow {
	s := func(k string) string { v, _ := m[k].(string); return v }
	return decisionRow{Candidate: s("candidate"), Metric: s("metric"), Change: s("change"), Interval: s("interval"),
		Gain: s("gain"), Cost: s("cost"), Evidence: s("evidence"), Busy: s("busy")}
}

func cmdIndex(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("index", "Builds the decision table across the notebooks of a directory from their\ncached results (nothing is executed): each notebook's decision row as its\nrecord opens with it (candidate, metric, before -> after, gain, cost / risk,\nevidence, recommendation), whether its runs were busy, and a dated log of\nthe decisions, newest last. Writes DIR/index.html and DIR/index.md.")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: benchbook index [flags] DIR\n\n")
		fs.PrintDefaults()
	}
	dir, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	paths, err := notebooksUnder(dir)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usageError{fmt.Sprintf("no notebooks (*.star) in %s or its subfolders", dir)}
	}
	var rows []indexRow
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		row, err := indexNotebook(ctx, p)
		if err != nil {
			fmt.Fprintf(stderr, "benchbook index: %s: %v\n", p, err)
			row = indexRow{Title: filepath.Base(p), Status: "error"}
		}
		row.Notebook = filepath.ToSlash(rel)
		rows = append(rows, row)
	}
	md := indexMarkdown(rows)
	if err := os.WriteFile(filepath.Join(dir, "index.md"), []byte(md), 0o644); err != nil {
		return err
	}
	page := "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Decision table</title>\n<style>" + indexCSS + "</style></head><body>\n" +
		record.MarkdownToHTML(md) + "</body></html>\n"
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(page), 0o644); err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	fmt.Fprintf(stderr, "wrote %s and %s\n", filepath.Join(dir, "index.md"), filepath.Join(dir, "index.html"))
	return nil
}

// notebooksUnder lists the *.star files of dir and its subfolders, in
// path order, leaving out caches, hidden folders and Go's testdata.
func notebooksUnder(dir string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != dir && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".star") {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	return paths, err
}

// indexNotebook reads one notebook's decision from its cache.
func indexNotebook(ctx context.Context, path string) (indexRow, error) {
	nb, err := runtime.ParseFile(path)
	if err != nil {
		return indexRow{}, err
	}
	// The row shows the notebook's last run, whatever its parameters.
	e, err := runtime.Open(ctx, nb, withModules(runtime.Options{Params: runtime.LastParams(runtime.DefaultCacheDir(path))}))
	if err != nil {
		return indexRow{}, err
	}
	defer e.Close()
	e.Run(false)
	r := e.Record()
	row := indexRow{Notebook: filepath.Base(path), Title: r.Title, Hypothesis: hypothesis(r), Status: "open"}
	if n := e.Summary(); n[runtime.StatusNever] > 0 {
		row.Status = "open (not all cells computed)"
	}
	j, ok := r.Verdict.(record.JSONer)
	if !ok {
		return row, nil
	}
	v, _ := j.JSON().(map[string]any)
	row.Status, _ = v["status"].(string)
	if m, ok := v["row"].(map[string]any); ok {
		row.Row = readDecisionRow(m)
	}
	if h, ok := v["headline"].(map[string]any); ok {
		row.Index = toFloat(h["index"])
	}
	row.Decided = decidedAt(r)
	return row, nil
}

// decidedAt is when the cell that shows the verdict was computed.
func decidedAt(r *record.Record) time.Time {
	for _, c := range r.Cells {
		for _, out := range c.Outputs {
			if out != nil && out.Type() == "verdict" {
				return c.ComputedAt
			}
		}
	}
	return time.Time{}
}

func toFloat(x any) float64 {
	switch x := x.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}

// hypothesis is the paragraph that starts with "Hypothesis:" in the
// Markdown cells (all its lines, up to a blank line or a heading), else
// the first paragraph after the title.
func hypothesis(r *record.Record) string {
	var first string
	for _, c := range r.Cells {
		if !c.Markdown {
			continue
		}
		lines := strings.Split(c.Source, "\n")
		for i, line := range lines {
			t := strings.TrimSpace(line)
			if rest, ok := cutPrefixFold(t, "hypothesis:"); ok {
				return paragraph(strings.TrimSpace(rest), lines[i+1:])
			}
			if first == "" && t != "" && !strings.HasPrefix(t, "#") {
				first = paragraph(t, lines[i+1:])
			}
		}
	}
	return first
}

// paragraph joins head with the lines that follow it up to the end of
// its Markdown paragraph.
func paragraph(head string, rest []string) string {
	words := []string{head}
	for _, line := range rest {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			break
		}
		words = append(words, t)
	}
	return strings.Join(words, " ")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

// indexMarkdown renders the decision table, one notebook a row as its
// record's verdict opens, with text bars (one block per 10 index points,
// as in the seeds), then the optimization log.
func indexMarkdown(rows []indexRow) string {
	var b strings.Builder
	b.WriteString("# Decision table\n\nEach notebook's decision row, as its record opens with it. Index: before = 100; one block per 10 index points, ▶ past 300. Busy: how many of the headline's runs other processes shared the box with.\n\n")
	b.WriteString("| Notebook | Investigation | Hypothesis | Candidate | Metric | Before → After (index) | Gain | Cost / risk | Evidence | Busy | Recommendation |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| [%s](%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdCell(r.Notebook), strings.TrimSuffix(r.Notebook, ".star")+".html", mdCell(r.Title), mdCell(r.Hypothesis),
			mdCell(r.Row.Candidate), mdCell(r.Row.Metric), r.change(), mdCell(r.Row.Gain), mdCell(r.Row.Cost),
			mdCell(r.Row.Evidence), mdCell(r.Row.Busy), mdCell(r.Status))
	}
	b.WriteString(optimizationLog(rows))
	return b.String()
}

// change is the headline's before -> after as the verdict states it, its
// interval, and the text bar of its index.
func (r indexRow) change() string {
	if r.Row.Change == "" {
		return ""
	}
	s := mdCell(r.Row.Change)
	if r.Row.Interval != "" {
		s += " (" + mdCell(r.Row.Interval) + ")"
	}
	if r.Index > 0 {
		s += " " + indexBar(r.Index)
	}
	return s
}

// optimizationLog is the decisions across the notebooks by date, newest
// last, as the seeds' optimization log keeps them: when, the change, its
// effect (the headline as the verdict states it; "(busy)" when other
// processes shared the box during its runs) and its status.
func optimizationLog(rows []indexRow) string {
	var dated []indexRow
	for _, r := range rows {
		if !r.Decided.IsZero() && r.Status != "" && r.Status != "error" {
			dated = append(dated, r)
		}
	}
	if len(dated) == 0 {
		return ""
	}
	sort.SliceStable(dated, func(i, j int) bool { return dated[i].Decided.Before(dated[j].Decided) })
	var b strings.Builder
	b.WriteString("\n## Optimization log\n\nEvery decision, newest last: kept (in the code now), reverted (tried, then undone), no effect (measured, did not help), open (not acted on yet). An effect measured while other processes used the box is marked (busy).\n\n")
	b.WriteString("| When (UTC) | Notebook | Change | Effect | Status |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range dated {
		change := r.Row.Candidate
		if change == "" {
			change = r.Title
		}
		effect := strings.TrimSpace(r.Row.Metric + " " + r.Row.Change)
		if r.Row.Gain != "" {
			effect += ": " + r.Row.Gain
		}
		if strings.HasPrefix(r.Row.Busy, "busy") {
			effect += " (busy)"
		}
		fmt.Fprintf(&b, "| %s | [%s](%s) | %s | %s | %s |\n", r.Decided.UTC().Format("2006-01-02 15:04"), mdCell(r.Notebook),
			strings.TrimSuffix(r.Notebook, ".star")+".html", mdCell(change), mdCell(effect), mdCell(r.Status))
	}
	return b.String()
}

// indexBar is one block per 10 index points, at most 30 (a 9,000 % gain
// would otherwise fill a screen with blocks).
func indexBar(index float64) string {
	const maxBlocks = 30
	n := int(index/10 + 0.5)
	if n > maxBlocks {
		return strings.Repeat("█", maxBlocks) + "▶"
	}
	return strings.Repeat("█", n)
}

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

const indexCSS = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:110rem;padding:0 1rem;color:#1d1d1f}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border:1px solid #ccd;padding:.35rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
td:nth-child(6){min-width:8rem;overflow-wrap:anywhere}
th{background:#f2f3f7}@media (prefers-color-scheme:dark){body{background:#111;color:#ddd}th{background:#222}th,td{border-color:#444}a{color:#8ab4ff}}`
