package starprofile

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/record/browsertest"
)

// seqVersusIndex is six pairs of runs of equal CPU time (400 samples of
// 2 ms) where A costs 50 times B per request, as PostgreSQL's sequential
// scan (A, 57 requests a run) against an index scan (B, 2,857): btgettuple
// runs in B only, an eighth of B's CPU.
func seqVersusIndex(t *testing.T) (a, b []*Data) {
	t.Helper()
	const q = "postgres;PostmasterMain;exec_simple_query"
	var texts [][2]string
	for i := range 6 {
		texts = append(texts, [2]string{
			fmt.Sprintf("%s;ExecScan;heap_getnextslot %d\n%s;pg_parse_query %d\n%s;ExecutorStart 2\n", q, 395+i%3, q, 1+i%2, q),
			fmt.Sprintf("%s;ExecScan;index_getnext_tid;btgettuple %d\n%s;ExecScan;index_getnext_tid %d\n%s;ExecScan %d\n%s;pg_parse_query %d\n%s;ExecutorStart %d\n",
				q, 47+i%5, q, 101-i%3, q, 107+i%2, q, 71-i%2, q, 73-i%3)})
	}
	return pairsOf(t, texts, 2_004_008, "postgres", [2]int64{57, 2857})
}

// The record of a comparison whose arms are 50x apart, in a browser: the
// function only the cheap arm runs (btgettuple) is a sliver of the
// differential graph and, in that arm's own graph, a frame at least 60 px
// wide on the page, its whole name on it, red (new in B), its hover title
// saying WORSENS. Screenshots of both layouts go to
// $BENCHBOOK_SCREENSHOT_DIR (bench/profile keeps them).
func TestCheapArmsFunctionLabelledInBrowser(t *testing.T) {
	a, b := seqVersusIndex(t)
	c, err := Compare(a, b, Options{ALabel: "seqscan", BLabel: "indexscan"})
	if err != nil {
		t.Fatal(err)
	}
	if v := verdictOf(c, "btgettuple"); v != "WORSENS" {
		t.Fatalf("btgettuple is %q in the comparison, want WORSENS", v)
	}
	got := browsertest.Eval(t, checkedPage(t, "seq scan against index scan", c), `
var out = [];
document.querySelectorAll("figure svg").forEach(function (svg) {
  var g = svg.querySelector('g[data-name="btgettuple"]');
  if (!g) { out.push(svg.getAttribute("aria-label") + "|none"); return; }
  var r = g.querySelector("rect").getBoundingClientRect(), text = g.querySelector("text");
  var label = "", inside = false, visible = false;
  if (text) {
    var tr = text.getBoundingClientRect();
    label = text.textContent;
    inside = tr.left >= r.left && tr.right <= r.right && tr.top >= r.top - 1 && tr.bottom <= r.bottom + 1;
    visible = getComputedStyle(text).visibility === "visible" && getComputedStyle(text).display !== "none" && tr.width > 0;
  }
  out.push([svg.getAttribute("aria-label"), r.width.toFixed(1), label, inside, visible,
    g.querySelector("rect").getAttribute("fill"), g.querySelector("title").textContent].join("|"));
});
return out.join("\n");`)
	t.Logf("browser:\n%s", got)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 {
		t.Fatalf("want three graphs (differential, seqscan, indexscan), the browser found:\n%s", got)
	}
	diff, inA, inB := strings.Split(lines[0], "|"), strings.Split(lines[1], "|"), strings.Split(lines[2], "|")
	if len(inB) != 7 {
		t.Fatalf("indexscan's graph has no btgettuple frame: %q", lines[2])
	}
	w, _ := strconv.ParseFloat(inB[1], 64)
	if w < 60 || inB[2] != "btgettuple" || inB[3] != "true" || inB[4] != "true" {
		t.Errorf("btgettuple in indexscan's graph: %.1f px, label %q, inside its frame %s, visible %s; want >= 60 px with its whole name shown", w, inB[2], inB[3], inB[4])
	}
	if red := inB[5]; !strings.HasPrefix(red, "#ff") || red == "#ffffff" || !strings.Contains(inB[6], "WORSENS") {
		t.Errorf("btgettuple in indexscan's graph: fill %s, title %q; want red and WORSENS", red, inB[6])
	}
	if inA[len(inA)-1] != "none" {
		t.Errorf("seqscan's graph draws btgettuple, which it never ran: %q", lines[1])
	}
	if len(diff) == 7 {
		if dw, _ := strconv.ParseFloat(diff[1], 64); dw > w/10 {
			t.Errorf("btgettuple %.1f px in the differential against %.1f px in its arm's: not the case this test is for", dw, w)
		}
	}

	figs := c.Figures()
	shot := func(name string, svgs ...[]byte) {
		var body strings.Builder
		for _, s := range svgs {
			body.Write(s)
		}
		html := "<!DOCTYPE html>\n<html><head>\n<meta charset=\"utf-8\">\n" +
			"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n" +
			"<title>" + name + "</title><style>body{margin:8px;background:#fff}svg{display:block;margin-bottom:12px}</style></head><body>\n" + body.String() + "</body></html>\n"
		height := 16
		for _, s := range svgs {
			var h int
			fmt.Sscanf(string(s[strings.Index(string(s), `height="`)+len(`height="`):]), "%d", &h)
			height += h + 12
		}
		png := browsertest.ScreenshotSized(t, html, name, 1216, height)
		if info, err := os.Stat(png); err == nil {
			t.Logf("%s: %d bytes", png, info.Size())
		}
	}
	shot("flame-differential", figs[0].SVG)
	shot("flame-arms", figs[1].SVG, figs[2].SVG)
}

// verdictOf is the comparison's verdict on a function, "" when it has none.
func verdictOf(c *Comparison, name string) string {
	for _, f := range c.d.Functions {
		if f.Name == name {
			return f.Total.Verdict
		}
	}
	return ""
}
