package runtime

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/resstate"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// A million printed lines: the cell finishes in seconds (appending each
// print to everything printed before made this quadratic: 80k lines took
// 20 s), the record shows the first MB and offers the whole as a download,
// and the HTML stays smaller than the output itself.
func TestMillionPrintedLines(t *testing.T) {
	timing.Only(t, "a million prints through the interpreter, timed: -race makes them several times slower")
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

// TestPrintBounded: printed output stops at the value size limit, the
// bound every value has: the kept text ends at a line with a notice saying
// where it was cut and which variable raises the limit, the cell succeeds
// with a warning counting what was dropped, and the cache entry stays near
// the limit. Before, 600 MB of print peaked at 4.4 GB and left a 765 MB
// entry while values stopped at 64 MiB.
func TestPrintBounded(t *testing.T) {
	// 3x the limit printed. The limit is small: the kept text is redacted
	// with regular expressions, which the race detector makes ~20 times
	// slower (a 1M limit took 11 s of the race pass, 0.6 s without it).
	const limit, lines = 64 << 10, 200
	t.Setenv("BENCHBOOK_MAX_VALUE", "64K")
	dir := t.TempDir()
	src := fmt.Sprintf("# %%%% chatty\nline = \"x\" * 999\nfor i in range(%d):\n    print(line)\nprint(\"tail\")\n\"end\"\n", lines)
	r := runNotebook(t, dir, src, Options{})
	st := r.e.CellRun("chatty")
	if st.Status != StatusRan {
		t.Fatalf("chatty: %s %v", st.Status, st.Err)
	}
	printed := st.outputs[0].String()
	if len(printed) > limit+300 || len(printed) < limit-2000 {
		t.Errorf("kept %d bytes of print under a 64K limit", len(printed))
	}
	if !strings.Contains(printed, "printed output cut here") || !strings.Contains(printed, "BENCHBOOK_MAX_VALUE") {
		t.Errorf("no notice at the cut: ...%q", printed[max(0, len(printed)-300):])
	}
	if strings.Count(printed, "\n") != strings.Count(printed, strings.Repeat("x", 999)+"\n")+1 {
		t.Errorf("a line was cut in the middle")
	}
	if len(st.outputs) != 2 || st.outputs[1].String() != `"end"` || strings.Contains(printed, "tail") {
		t.Errorf("after the cut: %d outputs (%v), tail printed: %v", len(st.outputs), st.outputs[1:], strings.Contains(printed, "tail"))
	}
	want := fmt.Sprintf("print: %d of the %d bytes printed were not kept", lines*1000+5-strings.Index(printed, "…"), lines*1000+5)
	if !slices.ContainsFunc(st.warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("warnings %q, want %q", st.warnings, want)
	}
	if n := resstate.UniqueUsage(r.e.store.dir); n > 2*limit {
		t.Errorf("the cache holds %d bytes after %d bytes printed under a 64K limit", n, lines*1000+5)
	}
}
