package record_test

import (
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
