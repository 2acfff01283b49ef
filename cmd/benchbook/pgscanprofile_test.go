package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// TestPgScanProfileNotebook runs notebooks/pg-scan-profile.star with small
// parameters (a 100,000-row table, a 10,000-row range so the index's work
// per request stands well above one sample's worth of the slow arm's CPU
// per request, four pairs of 2 s: three leave the paired t 2 degrees of
// freedom, too few): the differential profile shows the sequential scan's
// functions falling and the index's rising, each with an interval on its
// side of 0.
func TestPgScanProfileNotebook(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end notebook run")
	}
	needs.Postgres(t)
	if _, err := exec.LookPath("perf"); err != nil {
		needs.Missing(t, "perf", "apt-get install linux-perf")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "scan.json")
	start := time.Now()
	code, _, stderr := runCLI(t, "run", "-cache-dir", filepath.Join(dir, "cache"), "-format", "json", "-o", out,
		"-p", "rows=100000", "-p", "span=10000", "-p", "pairs=4", "-p", "duration=2s", "../../notebooks/pg-scan-profile.star")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	t.Logf("ran in %s", time.Since(start))
	outs := jsonOutputs(t, out)
	if len(outs["scan"]) != 1 {
		t.Fatalf("the scan cell shows %s", outs["scan"])
	}
	var table struct {
		Value struct {
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
		} `json:"value"`
	}
	if err := json.Unmarshal(outs["scan"][0], &table); err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range table.Value.Columns {
		col[c] = i
	}
	got := map[string][]any{}
	for _, r := range table.Value.Rows {
		got[r[col["function"]].(string)] = r
	}
	for name, want := range map[string]string{"ExecScan": "IMPROVES", "heap_getnextslot": "IMPROVES", "btgettuple": "WORSENS", "index_getnext_tid": "WORSENS"} {
		r, ok := got[name]
		if !ok {
			t.Errorf("%s is not in the scan table: %v", name, table.Value.Rows)
			continue
		}
		lo, okLo := r[col["low"]].(float64)
		hi, okHi := r[col["high"]].(float64)
		t.Logf("%s: A %v, B %v µs/req, B - A %v [%v, %v] %s", name, r[col["A µs/req"]], r[col["B µs/req"]], r[col["B - A"]], r[col["low"]], r[col["high"]], r[col["verdict"]])
		if r[col["verdict"]] != want {
			t.Errorf("%s: %v, want %s", name, r[col["verdict"]], want)
		}
		delta, _ := r[col["B - A"]].(float64)
		if (delta < 0) != (want == "IMPROVES") {
			t.Errorf("%s: B - A = %v µs/req has the wrong sign", name, delta)
		}
		if !okLo || !okHi {
			t.Errorf("%s: no interval", name)
			continue
		}
		if !(lo > 0 || hi < 0) || (hi < 0) != (want == "IMPROVES") {
			t.Errorf("%s: interval [%v, %v] is not on the side of its verdict", name, lo, hi)
		}
	}
}
