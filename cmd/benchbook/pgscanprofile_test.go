package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
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
	timing.Only(t, "each function's interval on its side of 0 from four pairs of 2 s: at the race pass's load btgettuple's came out -4.5 to 484 µs/req")
	needs.Postgres(t)
	if _, err := exec.LookPath("perf"); err != nil {
		needs.Missing(t, "perf", "apt-get install linux-perf")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "scan.json")
	start := time.Now()
	args := func(format, out string) []string {
		return []string{"run", "-cache-dir", filepath.Join(dir, "cache"), "-format", format, "-o", out,
			"-p", "rows=100000", "-p", "span=10000", "-p", "pairs=4", "-p", "duration=2s", "../../notebooks/pg-scan-profile.star"}
	}
	code, _, stderr := runCLI(t, args("json", out)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	t.Logf("ran in %s", time.Since(start))
	defer checkCheapArmsGraph(t, args("html", filepath.Join(dir, "scan.html")))
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

// checkCheapArmsGraph renders the record (every cell a hit) and reads B's
// flame graph as an XML parser does: btgettuple, which only the index scan
// runs, is a frame of at least 60 px of the graph's 1200, named on it, and
// red (WORSENS), where the differential, sized by the mean of both arms,
// leaves it a sliver.
func checkCheapArmsGraph(t *testing.T, args []string) {
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("render: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(args[6])
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<svg[^>]*aria-label="([^"]*)".*?</svg>`).FindAllStringSubmatch(string(page), -1) {
		graphs[m[1]] = m[0]
	}
	type frame struct {
		Name  string `xml:"data-name,attr"`
		Title string `xml:"title"`
		Rect  struct {
			Width float64 `xml:"width,attr"`
			Fill  string  `xml:"fill,attr"`
		} `xml:"rect"`
		Text string `xml:"text"`
	}
	// find gives the widest of the frames named name (a function reached
	// by several call paths has a frame on each) and how many there are.
	find := func(svg, name string) (widest frame, ok bool) {
		dec := xml.NewDecoder(strings.NewReader(svg))
		n := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				if n > 1 {
					t.Logf("%s: %d frames, the widest %.1f px", name, n, widest.Rect.Width)
				}
				return widest, n > 0
			}
			if se, isStart := tok.(xml.StartElement); isStart && se.Name.Local == "g" && len(se.Attr) > 0 && se.Attr[0].Value == name {
				var f frame
				if err := dec.DecodeElement(&f, &se); err != nil {
					t.Fatal(err)
				}
				if n++; f.Rect.Width > widest.Rect.Width {
					widest = f
				}
			}
		}
	}
	b, ok := find(graphs["B at its own scale, coloured by B - A"], "btgettuple")
	if !ok {
		t.Fatalf("B's graph has no btgettuple frame; graphs: %v", slices.Collect(maps.Keys(graphs)))
	}
	inDiff := "not drawn (narrower than 2 px, among the frames coalesced)"
	if d, ok := find(graphs["B against A: change in CPU per request"], "btgettuple"); ok {
		inDiff = fmt.Sprintf("%.1f px", d.Rect.Width)
	}
	t.Logf("btgettuple: in the differential %s; in B's graph %.1f px, labelled %q, fill %s", inDiff, b.Rect.Width, b.Text, b.Rect.Fill)
	if b.Rect.Width < 60 || b.Text != "btgettuple" || !strings.HasPrefix(b.Rect.Fill, "#ff") || !strings.Contains(b.Title, "WORSENS") {
		t.Errorf("btgettuple in B's graph: %.1f px, label %q, fill %s, title %q; want >= 60 px, named, red, WORSENS", b.Rect.Width, b.Text, b.Rect.Fill, b.Title)
	}
}
