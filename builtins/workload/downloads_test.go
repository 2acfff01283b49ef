package workload

import (
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// TestRunDownloads: a run offers its latency distribution as .hgrm text and
// its windows as CSV, one row per window.
func TestRunDownloads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	g := mustExec(t, `run = workload.http(URL, clients = 2, warmup = 0, duration = "1.2s", window = "0.4s", label = "GET /x")`,
		starlark.StringDict{"URL": str(srv.URL)})
	run := g["run"].(*Run)
	d := run.Downloads()
	if len(d) != 2 || d[0].Name != "run_GET__x.hgrm" || d[1].Name != "run_GET__x_windows.csv" {
		t.Fatalf("downloads %v", d)
	}
	hgrm := string(d[0].Data)
	if !strings.Contains(hgrm, "Value     Percentile TotalCount 1/(1-Percentile)") || !strings.Contains(hgrm, "#[Mean") {
		t.Errorf("not an hgrm distribution:\n%.300s", hgrm)
	}
	rows, err := csv.NewReader(strings.NewReader(string(d[1].Data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(run.d.Windows)+1 || len(run.d.Windows) < 2 || rows[0][0] != "start_s" {
		t.Errorf("csv has %d rows for %d windows: %v", len(rows), len(run.d.Windows), rows)
	}
}
