package record_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/testsupport/golden"
)

func renderHTML(t *testing.T, r *record.Record) string {
	t.Helper()
	var buf bytes.Buffer
	if err := record.HTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestGoldenHTML(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "record.html"), []byte(renderHTML(t, synthetic())))
}

func TestGoldenMarkdown(t *testing.T) {
	dir := t.TempDir()
	if err := record.Markdown(synthetic(), filepath.Join(dir, "record.md")); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "record_files", "*.svg"))
	if len(files) != 1 {
		t.Fatalf("figure files = %v, want the one safe figure of cell runs", files)
	}
	for _, f := range append([]string{filepath.Join(dir, "record.md")}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		golden.Check(t, filepath.Join("testdata", rel), data)
	}
}

func TestGoldenJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := record.JSON(&buf, synthetic()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "record.json"), buf.Bytes())
}

// TestHTMLEscapesNotebookText: every <script> the notebook tried to slip in
// (title, Markdown, source, output, table, error, warning, parameters) must
// come out as text, and the page itself carries no script at all.
func TestHTMLEscapesNotebookText(t *testing.T) {
	html := renderHTML(t, synthetic())
	lower := strings.ToLower(html)
	for _, bad := range []string{"<script", "javascript:", "onerror=", "onload=", "<img", "<i>x</i>"} {
		if strings.Contains(lower, bad) {
			t.Errorf("record contains %q unescaped", bad)
		}
	}
	for _, want := range []string{
		"&lt;token&gt;",                   // title
		"alert(&#39;out&#39;)",            // printed output
		"&lt;script&gt;alert(&#39;table",  // table cell
		"figure rejected",                 // SVG with an event handler
		"division by zero &lt;script&gt;", // error text
	} {
		if !strings.Contains(html, want) {
			t.Errorf("record lacks %q", want)
		}
	}
}

// TestHTMLShowsStatusAndProvenance checks what a reviewer relies on.
func TestHTMLShowsStatusAndProvenance(t *testing.T) {
	html := renderHTML(t, synthetic())
	for _, status := range []string{"hit", "ran", "live", "error", "skipped", "never"} {
		if !strings.Contains(html, `<span class="badge `+status+`">`) {
			t.Errorf("no %s badge", status)
		}
	}
	if n := strings.Count(html, "not this host"); n != 1 {
		t.Errorf("foreign-host warnings = %d, want 1 (cell baseline only)", n)
	}
	if !strings.Contains(html, "laptop-of-someone") {
		t.Error("the other host is not named")
	}
	for _, want := range []string{"AMD EPYC 7B13", "8GB", "6.1.0-27-amd64", "0.52 0.40 0.31", "go1.26.8",
		"4b1579c6b3fb", "dirty", "sha256:9f86d081884c7d65", "&lt;1000&gt;", "7 code cells: 1 ran, 2 hit, 1 live, 1 error, 1 skipped, 1 never", "Traceback"} {
		if !strings.Contains(html, want) {
			t.Errorf("record lacks %q", want)
		}
	}
	if !strings.Contains(html, `href="#covering-index"`) || !strings.Contains(html, `id="covering-index"`) {
		t.Error("table of contents does not link the Markdown heading")
	}
	if !strings.Contains(html, `href="#cell-runs"`) || !strings.Contains(html, `id="cell-runs"`) {
		t.Error("table of contents does not link the code cell")
	}
	if !strings.Contains(html, `download="runs.csv" href="data:text/csv;base64,`) {
		t.Error("figure data not offered as a data: download")
	}
	if !strings.Contains(html, "<del>old plan</del>") || !strings.Contains(html, "<th>arm</th>") {
		t.Error("GFM strikethrough or table not rendered")
	}
}

var externalRef = regexp.MustCompile(`(?i)(src|href|action|poster|data)\s*=\s*["']?\s*(https?:|//|ftp:)|url\(\s*["']?\s*(https?:|//)|@import`)

// TestHTMLIsSelfContained: nothing in the page refers to a URL a browser
// would fetch (xmlns attributes are names, not requests).
func TestHTMLIsSelfContained(t *testing.T) {
	html := renderHTML(t, synthetic())
	if m := externalRef.FindString(html); m != "" {
		t.Errorf("external reference %q", m)
	}
	if !strings.Contains(html, `Content-Security-Policy" content="default-src 'none'`) {
		t.Error("no CSP forbidding loads")
	}
}

// TestHTMLTwentyCharts: a 20-chart notebook stays under 1 MB.
func TestHTMLTwentyCharts(t *testing.T) {
	r := synthetic()
	for i := 0; i < 20; i++ {
		r.Cells = append(r.Cells, record.Cell{Name: "chart" + strconv.Itoa(i), Source: "plot.bars(cmp)\n", Status: "hit",
			ComputedAt: computed, Host: "bench-01", Outputs: []starlark.Value{figure{svg: barsSVG(60, "chart"), data: strings.Repeat("1,A,10000\n", 200)}}})
	}
	start := time.Now()
	html := renderHTML(t, r)
	elapsed := time.Since(start)
	t.Logf("20 charts: %d bytes, rendered in %v", len(html), elapsed)
	if len(html) >= 1<<20 {
		t.Errorf("html of 20 charts is %d bytes, want < 1 MB", len(html))
	}
	if strings.Count(html, "<svg") != 21 {
		t.Errorf("svg count = %d, want 21", strings.Count(html, "<svg"))
	}
}

func TestMarkdownReplacesOldFigures(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "nb.md")
	stale := filepath.Join(dir, "nb_files", "gone-9.svg")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := record.Markdown(synthetic(), md); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a figure of an earlier render was left behind")
	}
	text, _ := os.ReadFile(md)
	if !strings.Contains(string(text), "](nb_files/runs-2.svg)") {
		t.Errorf("figure link missing in\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "nb_files", "runs-2.svg")); err != nil {
		t.Error(err)
	}
}

func TestJSONIsValid(t *testing.T) {
	var buf bytes.Buffer
	if err := record.JSON(&buf, synthetic()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cells []struct {
			Name    string
			Status  string
			Outputs []struct {
				Type  string
				Value json.RawMessage
			}
		}
		Provenance struct{ Params map[string]string }
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 8 || doc.Cells[2].Name != "runs" || doc.Cells[2].Outputs[0].Type != "table" {
		t.Fatalf("cells not as rendered: %+v", doc.Cells)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, doc.Cells[2].Outputs[0].Value)
	if !strings.Contains(compact.String(), `"columns":["arm","req_per_s","p99_ms","note"]`) {
		t.Errorf("table summary = %s", compact.String())
	}
	if doc.Provenance.Params["clients"] != "64" {
		t.Errorf("params = %v", doc.Provenance.Params)
	}
}

// panicky is a value whose display method fails.
type panicky struct{ figure }

func (panicky) SVG() []byte { panic("boom") }

func TestBrokenValueDoesNotCrash(t *testing.T) {
	r := synthetic()
	r.Cells[1].Outputs = append(r.Cells[1].Outputs, panicky{})
	html := renderHTML(t, r)
	if !strings.Contains(html, "cannot display") {
		t.Error("a panicking value is not reported")
	}
}

var fence = regexp.MustCompile("(?s)\n```[a-z]*\n.*?\n```\n")

// TestMarkdownEscapesRawHTML: outside code blocks (where it is text), no
// HTML from the notebook survives into the .md file.
func TestMarkdownEscapesRawHTML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.md")
	if err := record.Markdown(synthetic(), path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	prose := fence.ReplaceAllString(string(data), "\n")
	for _, bad := range []string{"<script", "<img", "onload"} {
		if strings.Contains(prose, bad) {
			t.Errorf("markdown record has %q outside code blocks", bad)
		}
	}
	if !strings.Contains(string(data), "```python\n# <script>alert('src')</script>\n") {
		t.Error("source is not kept verbatim in its code block")
	}
}
