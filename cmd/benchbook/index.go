package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
)

// indexRow is one investigation in the decision table.
type indexRow struct {
	Notebook   string
	Title      string
	Hypothesis string
	Baseline   string
	Metric     string
	Index      float64 // after, with before = 100; 0 when unknown
	Unit       string  // the values' unit when they carry one (capacity: "users")
	Before     float64 // then the arms' medians in it
	After      float64
	Pairs      int
	Verdict    string // IMPROVES / WORSENS / ~
	Status     string // kept / reverted / no effect / open / ...
	Summary    string
}

func cmdIndex(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("index", "Builds the decision table across the notebooks of a directory from their\ncached results (nothing is executed): title, hypothesis, baseline, headline\nmetric before -> after as an index (a capacity in its unit too: 8 -> 16\nusers), pairs, verdict and status. Writes DIR/index.html and DIR/index.md.")
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
	row.Summary, _ = v["summary"].(string)
	if h, ok := v["headline"].(map[string]any); ok {
		row.Metric = fmt.Sprintf("%v (%v is better)", h["metric"], h["better"])
		row.Baseline, _ = h["a_label"].(string)
		row.Verdict, _ = h["verdict"].(string)
		row.Index = toFloat(h["index"])
		row.Unit, _ = h["unit"].(string)
		row.Before, row.After = toFloat(h["median_a"]), toFloat(h["median_b"])
		if ratios, ok := h["ratios"].([]any); ok {
			row.Pairs = len(ratios)
		}
	}
	return row, nil
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

// indexMarkdown renders the decision table with text bars (one block per
// 10 index points, as in the seeds).
func indexMarkdown(rows []indexRow) string {
	var b strings.Builder
	b.WriteString("# Decision table\n\nIndex: before = 100. One block per 10 index points; ▶ past 300.\n\n")
	b.WriteString("| Notebook | Investigation | Hypothesis | Baseline | Metric | Before → After | Pairs | Verdict | Status |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | ---: | --- | --- |\n")
	for _, r := range rows {
		change := ""
		if r.Index > 0 {
			// The JSON's index is the one its record shows (stats.Shown): print
			// it as it is, so 0.19 is not 0.
			change = fmt.Sprintf("100 → %s %s", strconv.FormatFloat(r.Index, 'f', -1, 64), indexBar(r.Index))
			if r.Unit != "" {
				// A capacity reads in its own unit first: "8 → 16 users".
				change = fmt.Sprintf("%s → %s %s (%s)", strconv.FormatFloat(r.Before, 'f', -1, 64),
					strconv.FormatFloat(r.After, 'f', -1, 64), mdCell(r.Unit), change)
			}
		}
		pairs := ""
		if r.Pairs > 0 {
			pairs = fmt.Sprint(r.Pairs)
		}
		fmt.Fprintf(&b, "| [%s](%s) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdCell(r.Notebook), strings.TrimSuffix(r.Notebook, ".star")+".html", mdCell(r.Title), mdCell(r.Hypothesis),
			mdCell(r.Baseline), mdCell(r.Metric), change, pairs, mdCell(r.Verdict), mdCell(r.Status))
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

const indexCSS = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:78rem;padding:0 1rem;color:#1d1d1f}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccd;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f3f7}@media (prefers-color-scheme:dark){body{background:#111;color:#ddd}th{background:#222}th,td{border-color:#444}a{color:#8ab4ff}}`
