package runtime

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/record"
)

// A million printed lines: the cell finishes in seconds (appending each
// print to everything printed before made this quadratic: 80k lines took
// 20 s), the record shows the first MB and offers the whole as a download,
// and the HTML stays smaller than the output itself.
func TestMillionPrintedLines(t *testing.T) {
	if testing.Short() {
		t.Skip("prints a million lines")
	}
	dir := t.TempDir()
	src := "# %% chatty\nfor i in range(1000000):\n    print(\"line\", i)\n"
	start := time.Now()
	r := runNotebook(t, dir, src, Options{})
	took := time.Since(start)
	if r.status("chatty") != StatusRan {
		t.Fatalf("chatty: %s\n%s", r.status("chatty"), r.stderr.String())
	}
	full := r.outputs["chatty"]
	if n := strings.Count(full, "\n"); n != 1000000 {
		t.Fatalf("%d lines printed, want 1000000", n)
	}
	// Quadratic appending needs hours here; a minute leaves room for a busy box.
	if took > time.Minute {
		t.Errorf("a million prints took %v", took)
	}
	var html bytes.Buffer
	if err := record.HTML(&html, r.e.Record()); err != nil {
		t.Fatal(err)
	}
	t.Logf("run %v, output %d bytes, HTML %d bytes", took, len(full), html.Len())
	if html.Len() >= len(full) {
		t.Errorf("HTML is %d bytes for %d bytes of output", html.Len(), len(full))
	}
	if !strings.Contains(html.String(), "line 0\n") || strings.Contains(html.String(), "line 999999\n") {
		t.Error("the record should show the first lines and not the last")
	}
	m := regexp.MustCompile(`download="chatty-output-1.txt.gz" href="data:application/gzip;base64,([^"]+)"`).FindStringSubmatch(html.String())
	if m == nil {
		t.Fatal("no download of the whole output")
	}
	data, _ := base64.StdEncoding.DecodeString(m[1])
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := io.ReadAll(zr)
	if string(whole) != full {
		t.Errorf("the download holds %d bytes, the output %d", len(whole), len(full))
	}
	// The second run reads it back from the cache as one output.
	again := runNotebook(t, dir, "", Options{})
	if again.status("chatty") != StatusHit || again.outputs["chatty"] != full {
		t.Errorf("from the cache: %s, %d bytes", again.status("chatty"), len(again.outputs["chatty"]))
	}
}

// A cell whose source is over the limit is shown cut, whole for download.
func TestLongSourceShownCut(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# %% big\nx = 0\n")
	for b.Len() <= displayLimit+1000 {
		b.WriteString("x = x + 1  # a line to make the cell long\n")
	}
	r := runNotebook(t, dir, b.String(), Options{})
	rec := r.e.Record()
	c := rec.Cells[0]
	if len(c.Source) > displayLimit+200 || !strings.Contains(c.Source, "more not shown") {
		t.Errorf("source shown: %d bytes", len(c.Source))
	}
	long, ok := c.Outputs[0].(record.Downloader)
	if !ok || len(long.Downloads()) != 1 || long.Downloads()[0].Name != "big-source.txt.gz" {
		t.Fatalf("no download of the whole source: %v", c.Outputs)
	}
}
