package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLastParamsAndIndex: after a run with -p, cells, render and index show
// that run (not the defaults), and the decision table's bar stays short
// however large the gain.
func TestLastParamsAndIndex(t *testing.T) {
	nb := writeNB(t, `# %% [markdown]
# # Does the new path serve more?
# Hypothesis: it skips a copy.

# %% params
base = param("base", 10)

# %% compare
c = compare([base * 1.0, base + 1.0, base + 0.5, base + 0.2, base + 0.7, base + 0.4], [300.0, 310.0, 290.0, 305.0, 298.0, 302.0], metric = "rps", better = "higher")

# %% decision
verdict(status = "kept", headline = c, summary = "the new path", equivalence = "the same handler code answers in both arms")
`)
	dir := filepath.Dir(nb)
	if code, _, stderr := runCLI(t, "run", "-p", "base=12", nb); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	code, out, stderr := runCLI(t, "cells", nb)
	if code != 0 || !strings.Contains(stderr, "last run's parameters: -p base=12") || regexp.MustCompile(`(?m)^(params|compare|decision)\s+\d+\s+(stale|never)`).MatchString(out) {
		t.Errorf("cells after run -p: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := runCLI(t, "render", nb); code != 0 || !strings.Contains(stderr, "3 hit") {
		t.Errorf("render after run -p: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "index", dir); code != 0 {
		t.Fatalf("index: exit %d\n%s", code, stderr)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	row := regexp.MustCompile(`(?m)^\| \[nb\.star\].*$`).FindString(string(table))
	if !strings.Contains(row, "Does the new path serve more?") || !strings.Contains(row, "| kept |") || !strings.Contains(row, "IMPROVES") {
		t.Errorf("index row: %q", row)
	}
	if n := strings.Count(row, "█"); n != 30 || !strings.Contains(row, "▶") {
		t.Errorf("a gain of ~2,500 %% should be 30 blocks and ▶, got %d blocks: %q", n, row)
	}
}

// TestIndexRecursesAndKeepsHypothesis: notebooks in subfolders get rows
// (linked by their relative path), caches do not, and a hypothesis over
// several lines is kept whole.
func TestIndexRecursesAndKeepsHypothesis(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("top.star", "# %% [markdown]\n# # Top study\n# Hypothesis: one line.\n\n# %% a\nx = 1\n")
	write("pg/deep/idx.star", "# %% [markdown]\n# # Deep study\n#\n# Hypothesis: the scan reads every page;\n# an index reads three,\n# so DB CPU falls.\n#\n# Method: ABAB.\n\n# %% a\nx = 1\n")
	write(".benchbook/junk.star", "# %% a\nx = 1\n")
	if code, _, stderr := runCLI(t, "index", dir); code != 0 {
		t.Fatalf("index: exit %d\n%s", code, stderr)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	row := regexp.MustCompile(`(?m)^\| \[pg/deep/idx\.star\]\(pg/deep/idx\.html\).*$`).FindString(string(table))
	if row == "" {
		t.Fatalf("no row for the notebook in a subfolder:\n%s", table)
	}
	if !strings.Contains(row, "| the scan reads every page; an index reads three, so DB CPU falls. |") {
		t.Errorf("hypothesis cut short: %q", row)
	}
	if strings.Contains(string(table), "junk") {
		t.Error("a notebook under .benchbook got a row")
	}
	if !strings.Contains(string(table), "| one line. |") {
		t.Errorf("top-level row lost:\n%s", table)
	}
}

// TestRenderSaysLastParams: render (like cells) shows the last run, whose
// parameters may differ from the defaults run uses; it says which.
func TestRenderSaysLastParams(t *testing.T) {
	nb := writeNB(t, "# %% p\nrows = param(\"rows\", 10)\n")
	if code, _, stderr := runCLI(t, "run", "-p", "rows=100000", nb); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, cmd := range []string{"render", "cells"} {
		code, _, stderr := runCLI(t, cmd, nb)
		if code != 0 || !strings.Contains(stderr, "with the last run's parameters: -p rows=100000") {
			t.Errorf("%s: exit %d, does not name the last run's parameters:\n%s", cmd, code, stderr)
		}
	}
}

// TestIndexSymlinkLoopsAndFIFOs (issue 25): a folder linking to its parent,
// a link to itself named like a notebook and a FIFO named like one end in
// an error naming each, and the table is still written. Before, the FIFO
// blocked index forever.
func TestIndexSymlinkLoopsAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "good.star"), []byte("# %% a\nx = 1\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("..", filepath.Join(dir, "sub", "up")))
	must(os.Symlink("self.star", filepath.Join(dir, "self.star")))
	must(syscall.Mkfifo(filepath.Join(dir, "pipe.star"), 0o644))
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runCLI(t, "index", dir)
		done <- result{code, stderr}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("index still running after 30s")
	}
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"pipe.star: not a regular file (a FIFO)", "self.star: too many levels of symbolic links"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	table, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	if !strings.Contains(string(table), "good.star") || strings.Contains(string(table), "sub/up") {
		t.Errorf("table:\n%s", table)
	}
}

// TestIndexShowsTheRecordsRowAndALog (issue 52): each notebook's row in
// the index holds the decision row its record opens with (read from the
// JSON record: the same words), a busy column, and the decisions make a
// dated log, newest last, a busy effect marked (busy).
func TestIndexShowsTheRecordsRowAndALog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, runs, status string) string {
		p := filepath.Join(dir, name)
		src := `# %% [markdown]
# # ` + name + `
# Hypothesis: it serves more.

# %% decide
def _runs(xs, foreign):
    return [struct(rps = float(x), foreign_cpu = foreign, load1 = 9.3, steal_cpu = 0.0, warnings = []) for x in xs]
c = compare(_runs([100, 102, 98, 101, 99, 103], ` + runs + `), _runs([120, 125, 119, 122, 121, 124], ` + runs + `), metric = "rps")
verdict(status = "` + status + `", headline = c, summary = "the change in ` + name + `", equivalence = "one binary", risk = "needs a flag")
`
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	quiet := write("quiet.star", "0.01", "kept")
	busy := write("busy.star", "1.7", "open")
	rowOf := func(nb string) map[string]any {
		t.Helper()
		out := filepath.Join(t.TempDir(), "r.json")
		if code, _, stderr := runCLI(t, "run", "-format", "json", "-o", out, nb); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", nb, code, stderr)
		}
		var rec struct {
			Verdict struct {
				Value struct {
					Row map[string]any `json:"row"`
				} `json:"value"`
			} `json:"verdict"`
		}
		data, _ := os.ReadFile(out)
		if err := json.Unmarshal(data, &rec); err != nil || rec.Verdict.Value.Row == nil {
			t.Fatalf("%s: no verdict row in the JSON record (%v):\n%s", nb, err, data)
		}
		return rec.Verdict.Value.Row
	}
	quietRow := rowOf(quiet)
	time.Sleep(1100 * time.Millisecond) // the log's dates are to the minute, its order to the instant
	busyRow := rowOf(busy)
	if code, _, stderr := runCLI(t, "index", dir); code != 0 {
		t.Fatalf("index: exit %d\n%s", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	table, log, _ := strings.Cut(string(data), "## Optimization log")
	for nb, row := range map[string]map[string]any{"quiet": quietRow, "busy": busyRow} {
		line := regexp.MustCompile(`(?m)^\| \[` + nb + `\.star\].*$`).FindString(table)
		cells := strings.Split(line, " | ")
		if len(cells) != 11 {
			t.Fatalf("%s: row %q", nb, line)
		}
		for i, key := range map[int]string{3: "candidate", 4: "metric", 6: "gain", 7: "cost", 8: "evidence", 9: "busy"} {
			if want := strings.ReplaceAll(row[key].(string), "|", `\|`); cells[i] != want {
				t.Errorf("%s: index's %s %q, the record's %q", nb, key, cells[i], want)
			}
		}
		if !strings.HasPrefix(cells[5], row["change"].(string)+" ("+row["interval"].(string)+") █") {
			t.Errorf("%s: index's before -> after %q, the record's %q", nb, cells[5], row["change"])
		}
	}
	if quietRow["busy"] != "quiet" || busyRow["busy"] != "busy in 12 of 12 runs" {
		t.Errorf("busy: quiet %q, busy %q", quietRow["busy"], busyRow["busy"])
	}
	q, b := strings.Index(log, "[quiet.star]"), strings.Index(log, "[busy.star]")
	if q < 0 || b < q {
		t.Errorf("the log is not dated oldest first:\n%s", log)
	}
	if !regexp.MustCompile(`(?m)^\| 20\d\d-\d\d-\d\d \d\d:\d\d \| \[busy\.star\]\(busy\.html\) \| the change in busy\.star \| rps \(higher is better\) 100 → 121: IMPROVES \+21\.\d % \(busy\) \| open \|$`).MatchString(log) {
		t.Errorf("the busy entry of the log:\n%s", log)
	}
	if strings.Contains(log[q:b], "(busy)") {
		t.Errorf("the quiet entry is marked busy:\n%s", log)
	}
}

// TestIndexShowsCapacityInItsUnit: a two-arm capacity study renders with
// its chart, its verdict says the capacities in their unit, and its index
// row (the record's decision row) says "10 → 20 users" before the index.
func TestIndexShowsCapacityInItsUnit(t *testing.T) {
	nb := writeNB(t, `# %% [markdown]
# # Does B carry more users?
# Hypothesis: B halves the work per request.

# %% runs
load("@std/abab.star", "abab")
load("@std/capacity.star", "capacity")
def _arm(arm):
    per_user = {"A": 5.0, "B": 2.5}[arm]
    return capacity(lambda n: struct(p99 = per_user * n, users = n), {"p99": 50}, 1, 32)
exp = abab(arms = {"A": None, "B": None}, pairs = 6, run = _arm)

# %% decision
cmp = compare(exp, metric = "capacity")
verdict(status = "kept", headline = cmp, summary = "half the work", equivalence = "the same answers by construction")

# %% charts
plot.capacity(exp)
`)
	dir := filepath.Dir(nb)
	if code, _, stderr := runCLI(t, "run", nb); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	html, _ := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".html")
	if !strings.Contains(string(html), "capacity 10 -&gt; 20 users; capacity (higher is better)") {
		t.Errorf("the record's verdict does not say the capacities in users")
	}
	if !strings.Contains(string(html), "<title>p99 by load, and the capacity at the SLO</title>") {
		t.Errorf("the record lacks the capacity chart")
	}
	if code, _, stderr := runCLI(t, "index", dir); code != 0 {
		t.Fatalf("index: exit %d\n%s", code, stderr)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	row := regexp.MustCompile(`(?m)^\| \[nb\.star\].*$`).FindString(string(table))
	if !strings.Contains(row, "| 10 → 20 users (100 → 200) (95 % CI 200 to 200) ████████████████████ |") || !strings.Contains(row, "| capacity (higher is better) |") ||
		!strings.Contains(row, "| IMPROVES +100.0 % |") || !strings.HasSuffix(row, "| kept |") {
		t.Errorf("index row: %q", row)
	}
}
