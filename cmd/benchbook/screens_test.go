package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/benchbook/benchbook/runtime/record/browsertest"
)

// soakNotebook is a short soak against the embedded demo, the third kind
// of record a reviewer reads.
const soakNotebook = `# %% [markdown]
# # Does the demo's memory stay flat under load?
# Hypothesis: the search handler keeps no per-request state.

# %% target
d = backend.demo(index = True, rows = 4000)

# %% soak
load("@std/soak.star", "soak", "high_water_halves", "at_least")
def _window(w):
    return workload.http(d.url + "/search?q=t0042&limit=20", rate = 300, duration = "1s", warmup = "200ms", observe = [d], label = "window %d" % w.index)
s = soak(run = _window, duration = "4s", window = "1s", checks = [
    high_water_halves("server_rss_peak_kb", within = 20000),
    at_least("rps", 1),
])
s.report

# %% charts
show(
    plot.series(s, metric = "server_rss_peak_kb"),
    plot.series(s, metric = "rps"),
    plot.series(s.windows, metric = "p99"),
)
`

// TestRecordsReadableAt1280: the quickstart, the postgres template and a
// soak, each run short, rendered and opened at 1280 px in headless
// Chromium: no page error, and no bar of any chart under 2 px as drawn
// (the bar charts move to a log axis rather than flatten small values).
// Set BENCHBOOK_SCREENSHOT_DIR to keep the screenshots. The quickstart's
// record is TestQuickstart's, the postgres template's
// TestPostgresTemplateRuns's: each notebook runs once.
func TestRecordsReadableAt1280(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("an end-to-end notebook run")
	}
	t.Run("soak", func(t *testing.T) {
		dir := t.TempDir()
		nb, out := filepath.Join(dir, "soak.star"), filepath.Join(dir, "soak.html")
		if err := os.WriteFile(nb, []byte(soakNotebook), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "run", "-cache-dir", filepath.Join(dir, "cache"), "-o", out, nb); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		readableAt1280(t, "soak", string(data), 3)
	})
}

// readableAt1280 opens a record in headless Chromium at 1280 px: no page
// error, at least charts charts, and no bar of any of them under 2 px.
func readableAt1280(t *testing.T, name, page string, charts int) {
	t.Helper()
	res := browsertest.Check(t, page)
	if len(res.SVGs) < charts {
		t.Errorf("%d charts, want %d", len(res.SVGs), charts)
	}
	for _, thin := range browsertest.ThinBars(page, res.SVGs, 2) {
		t.Error(thin)
	}
	browsertest.ScreenshotAs(t, page, name)
}
