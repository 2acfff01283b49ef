package record_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/record/browsertest"
)

// browserRecord is the synthetic record with twenty charts more.
func browserRecord() *record.Record {
	r := synthetic()
	for i := 0; i < 20; i++ {
		r.Cells = append(r.Cells, record.Cell{Name: "chart" + strconv.Itoa(i), Source: "plot.bars(cmp)\n", Status: "hit",
			Why: "cached", ComputedAt: computed, Host: "bench-01", Duration: time.Duration(i+1) * time.Millisecond,
			Outputs: []starlark.Value{figure{svg: barsSVG(12+i, "chart "+strconv.Itoa(i)), data: "pair,arm,rps\n1,A,1\n"}}})
	}
	return r
}

// TestBrowser opens the record in headless Chromium: no console errors,
// every SVG has a size on screen, nothing is requested, and a screenshot
// is taken (kept in $BENCHBOOK_SCREENSHOT_DIR when set).
func TestBrowser(t *testing.T) {
	page := renderHTML(t, browserRecord())
	res := browsertest.Check(t, page)
	t.Logf("%d bytes, %d svgs, load at %.0f ms (page clock)", len(page), len(res.SVGs), res.LoadMs)
	if n := strings.Count(page, "<svg"); n < 21 {
		t.Errorf("page has %d svgs, want at least 21", n)
	}
	browsertest.Screenshot(t, page)
}

// TestTitleCodeSpanFont: a `code span` in the record's title rendered at
// the body's code size, 13 px inside a 25 px heading (issue 33). Measured
// as Chromium computes it, the code keeps the heading's scale.
func TestTitleCodeSpanFont(t *testing.T) {
	r := synthetic()
	r.Title = "Does `observation_effective_newest` make search cheaper?"
	page := renderHTML(t, r)
	if !strings.Contains(page, "<code>observation_effective_newest</code>") {
		t.Fatal("the title's code span is not code")
	}
	got := browsertest.Eval(t, page, `
  var h = document.querySelector("h1"), c = h.querySelector("code");
  var p = document.createElement("p"); p.innerHTML = "x <code>y</code>"; document.body.appendChild(p);
  return JSON.stringify([parseFloat(getComputedStyle(h).fontSize), parseFloat(getComputedStyle(c).fontSize), parseFloat(getComputedStyle(p.querySelector("code")).fontSize)]);`)
	var h, code, body float64
	if _, err := fmt.Sscanf(got, "[%g,%g,%g]", &h, &code, &body); err != nil {
		t.Fatalf("%q: %v", got, err)
	}
	if code < 0.8*h {
		t.Errorf("title code at %.1f px in a %.1f px heading", code, h)
	}
	if body < 12 || body > 14.5 {
		t.Errorf("code in body text at %.1f px, want about 13", body)
	}
}

// TestInputsTableOneLineARow (issue 52): at 1400 px, as at 1280, every row
// of the inputs table is one line: a 64-digit hash, a method's long
// version and a deep path wrapped the table into a wall. A long hash shows
// its first characters, the whole in the cell's title.
func TestInputsTableOneLineARow(t *testing.T) {
	r := synthetic()
	long := "sha256:" + strings.Repeat("9f86d081884c7d65", 4)
	method := "7: paired = Wilcoxon signed-rank, Hodges-Lehmann, Walsh interval; unpaired = Mann-Whitney, Hodges-Lehmann, Moses interval; ties spread over their rounding cell"
	r.Cells[1].Inputs = append(r.Cells[1].Inputs,
		record.Input{Kind: "binary", Name: "/home/someone/src/service/.benchbook/nb/resources/bin/1536b5195279d1ae5da3/server", Hash: long},
		record.Input{Kind: "method", Name: "metric", Hash: method},
		record.Input{Kind: "git", Name: "/home/someone/src/service@", Hash: "4b1579c6b3fb4b1579c6b3fb4b1579c6b3fb4b15+" + strings.Repeat("ab", 32)})
	page := renderHTML(t, r)
	if !strings.Contains(page, `title="`+method+`"`) || !strings.Contains(page, `title="`+long+`"`) {
		t.Error("a shortened hash lacks its whole in the title")
	}
	for _, width := range []int{1280, 1400} {
		got := browsertest.EvalAt(t, page, width, `
  var rows = document.querySelectorAll("#provenance table.inputs tr");
  var hs = Array.prototype.map.call(rows, function (r) { return Math.round(r.getBoundingClientRect().height); });
  return JSON.stringify(hs);`)
		var hs []float64
		if err := json.Unmarshal([]byte(got), &hs); err != nil || len(hs) < 5 {
			t.Fatalf("%d px: row heights %q: %v", width, got, err)
		}
		for i, h := range hs[1:] {
			if h > 1.3*hs[1] {
				t.Errorf("%d px: inputs row %d is %.0f px high, a one-line row %.0f: it wraps", width, i+1, h, hs[1])
			}
		}
	}
}
