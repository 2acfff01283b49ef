package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// stateNB uses a tracked SQLite file: data fills it, peek (cache=false)
// only reads it, report reads it after peek.
const stateNB = `# %% db
db = backend.sqlite("state.db")

# %% data
db.exec("CREATE TABLE t (x int)")
db.exec("INSERT INTO t VALUES (1), (2), (3)")

# %% peek cache=false
seen = db.query("SELECT count(*) AS n FROM t")[0]["n"]

# %% report
total = db.query("SELECT sum(x) AS s FROM t")[0]["s"]
summary = "%d rows" % total
`

// TestCellsAgreesWithRun: cells said report was stale ("the state of ...
// is unknown: an upstream cell has not run") and the run then found it a
// hit (issue 33). Each cell's status in cells must be what run does, or
// say "unknown until CELL runs".
func TestCellsAgreesWithRun(t *testing.T) {
	nb := writeNB(t, stateNB)
	if code, _, stderr := runCLI(t, "run", "-no-color", nb); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	// Edit peek, a cell that only reads: it runs again, and report is a
	// hit if it leaves the data as it was, which cells cannot know.
	src, _ := os.ReadFile(nb)
	os.WriteFile(nb, []byte(strings.Replace(string(src), "count(*) AS n", "count(x) AS n", 1)), 0o644)
	code, out, stderr := runCLI(t, "cells", "-json", nb)
	if code != 0 {
		t.Fatalf("cells: exit %d\n%s", code, stderr)
	}
	var cells []struct{ Name, Status, Why string }
	if err := json.Unmarshal([]byte(out), &cells); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "run", "-no-color", nb)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, stderr)
	}
	ran := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  (\w+)\s+(\w+)`).FindAllStringSubmatch(stderr, -1) {
		ran[m[2]] = m[1]
	}
	for _, c := range cells {
		if c.Status == "" {
			continue // markdown
		}
		did := ran[c.Name]
		if did == "ran" {
			did = "stale"
		}
		switch {
		case c.Status == did:
		case c.Status == "unknown" && regexp.MustCompile(`unknown until cell \w+ runs`).MatchString(c.Why):
		default:
			t.Errorf("cell %s: cells said %s (%s), run did %s\n%s", c.Name, c.Status, c.Why, ran[c.Name], stderr)
		}
	}
	if ran["report"] != "hit" {
		t.Errorf("report after a read-only cell = %s, want hit\n%s", ran["report"], stderr)
	}
}
