package display_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/display"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
)

const notebook = `# %% [markdown]
# # Display builtins

# %% rows
rows = [{"arm": "A", "rps": 1000.5}, {"arm": "B", "rps": 12345.678}]

# %% shown
md("""
    ## From md
    Some *emphasis* <script>alert(1)</script>
""")
t = table(rows)
show(t, {"k": 1})
t.column("rps")
`

// runRecord runs the notebook in dir through the engine and returns its
// record.
func runRecord(t *testing.T, path string) *record.Record {
	t.Helper()
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: io.Discard, Modules: []runtime.Module{display.Module()}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Run(true)
	return e.Record()
}

// TestNotebookOutputs: md and show emit in call order, the displayed last
// expression follows, and a cache hit brings the same outputs back (the
// table and the Markdown decoded by the codec).
func TestNotebookOutputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.star")
	if err := os.WriteFile(path, []byte(notebook), 0o644); err != nil {
		t.Fatal(err)
	}
	for run, want := range []record.Status{record.StatusRan, record.StatusHit} {
		r := runRecord(t, path)
		var cell *record.Cell
		for i := range r.Cells {
			if r.Cells[i].Name == "shown" {
				cell = &r.Cells[i]
			}
		}
		if cell == nil || cell.Status != want {
			t.Fatalf("run %d: cell shown = %+v, want status %s", run, cell, want)
		}
		var types []string
		for _, v := range cell.Outputs {
			types = append(types, v.Type())
		}
		if got := strings.Join(types, " "); got != "markdown table dict list" {
			t.Fatalf("run %d: outputs %s, want markdown table dict list", run, got)
		}
		if tb := cell.Outputs[1].(*display.Table); tb.Len() != 2 || tb.Columns()[1] != "rps" {
			t.Errorf("run %d: table %v", run, tb)
		}
		var buf bytes.Buffer
		if err := record.HTML(&buf, r); err != nil {
			t.Fatal(err)
		}
		html := buf.String()
		for _, s := range []string{`<h2 id="md-from-md">From md</h2>`, "<em>emphasis</em>", `<td class="num">12,346</td>`} {
			if !strings.Contains(html, s) {
				t.Errorf("run %d: record lacks %q", run, s)
			}
		}
		if strings.Contains(html, "<script>alert") {
			t.Errorf("run %d: md() let raw HTML through", run)
		}
	}
}
