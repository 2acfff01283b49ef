package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/record/browsertest"
)

// TestQuickstart runs notebooks/quickstart.star end to end with short runs
// (the real demo target as a child process, ABAB, compare, charts,
// verdict), checks the record in a browser at 1280 px (no page error, 3
// charts, no bar under 2 px: TestRecordsReadableAt1280's check), and that
// a second run is all cache hits.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end notebook run")
	}
	// Another job keeps the box busy, as on a new user's laptop: every run
	// is busy, and the record says so once (issue 52: a bullet per run).
	cpuHog(t, 2)
	dir := t.TempDir()
	out := filepath.Join(dir, "quickstart.html")
	args := []string{"run", "-cache-dir", filepath.Join(dir, "cache"), "-o", out,
		"-p", "duration=1s", "-p", "pairs=2", "-p", "rows=4000", "-p", "clients=4",
		"../../notebooks/quickstart.star"}
	code, _, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"ran     runs", "ran     decision", "live    targets"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Verdict", "IMPROVES", "<svg", "Provenance"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("record lacks %q", want)
		}
	}
	readableAt1280(t, "quickstart", string(page), 3) // TestRecordsReadableAt1280's quickstart case
	decisionRowFirst(t, string(page))
	code, _, stderr = runCLI(t, args...)
	if code != 0 || !strings.Contains(stderr, "6 hit, 1 live") {
		t.Errorf("second run: exit %d, want all hits:\n%s", code, stderr)
	}
}

// decisionRowFirst (issue 52): in Chromium, the record opens with the
// verdict's decision row (above every other table, warning, chart and
// cell), shows at most one busy-box line, and the row, the compare cell's
// table and the chart's label print one index.
func decisionRowFirst(t *testing.T, page string) {
	t.Helper()
	got := browsertest.Eval(t, page, `
  var row = document.querySelector("table.decision");
  if (!row) return "no decision row";
  var top = row.getBoundingClientRect().top;
  var before = Array.prototype.filter.call(document.querySelectorAll("table, svg, p.warn, li, section, pre"), function (e) {
    return e !== row && !row.contains(e) && e.getClientRects().length > 0 && e.getBoundingClientRect().top < top;
  }).map(function (e) { return e.tagName + "." + e.className; });
  var busy = Array.prototype.filter.call(document.querySelectorAll("p, li, td, pre"), function (e) {
    return e.getClientRects().length > 0 && /busy box/i.test(e.textContent) && !e.querySelector("p, li, td");
  }).length;
  return JSON.stringify({before: before, busy: busy, cells: Array.prototype.map.call(row.querySelectorAll("td"), function (td) { return td.innerText; })});`)
	var res struct {
		Before []string
		Busy   int
		Cells  []string
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("%q: %v", got, err)
	}
	if len(res.Before) > 0 {
		t.Errorf("the decision row is not the first thing the record shows: above it %q", res.Before)
	}
	if res.Busy > 1 {
		t.Errorf("%d busy-box lines shown, want at most one", res.Busy)
	}
	if res.Busy == 0 && strings.Contains(page, "BUSY BOX") {
		t.Errorf("the busy box is in the page but not shown")
	}
	if len(res.Cells) != 7 || !strings.HasPrefix(res.Cells[2], "100 → ") {
		t.Fatalf("decision row cells %q", res.Cells)
	}
	index := strings.Fields(strings.TrimPrefix(res.Cells[2], "100 → "))[0]
	if !strings.Contains(page, "<td>rps</td><td class=\"num\">") || !regexp.MustCompile(`<td>rps</td>(<td class="num">[^<]*</td>){2}<td class="num">`+regexp.QuoteMeta(index)+`</td>`).MatchString(page) {
		t.Errorf("the compare cell's table does not print the row's index %s", index)
	}
	if !regexp.MustCompile(`>` + regexp.QuoteMeta(index) + ` (IMPROVES|WORSENS|~)</text>`).MatchString(page) {
		t.Errorf("the chart's label does not print the row's index %s", index)
	}
}
