package metric

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/fmtnum"
	"github.com/benchbook/benchbook/builtins/internal/table"
	"github.com/benchbook/benchbook/runtime/stats"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestEveryShownIndexInsideShownInterval: wherever the record shows an
// index — a table built from c.index as the notebooks build theirs, the
// JSON record's "index", the text bar line — it lies inside the interval
// ci_range shows, for an index far below 1 and for an interval narrower
// than one index point. Before, each rounded on its own: an index of 0.19
// went to JSON as 0 and to the bar as "after ▏ 0" beside "0.187 to 0.193",
// and +0.6 % at 12 pairs was c.index 101 beside "100.55 to 100.65"; a fifth digit
// (100.640 in 100.636 to 100.644) would be rounded away by the table.
func TestEveryShownIndexInsideShownInterval(t *testing.T) {
	g := startest.MustExec(t, startest.Options{Modules: testModules()}, `
wobble = [1.004, 0.997, 1.006, 0.995, 1.002, 0.999, 1.005, 0.996, 1.003, 0.998, 1.001, 0.994]
tiny = compare([100 * w for w in wobble[:8]], [0.19 * w for w in reversed(wobble[:8])], better = "higher")
flat = [1.00005, 0.99997, 1.00006, 0.99995, 1.00002, 0.99999, 1.00005, 0.99996, 1.00003, 0.99998, 1.00001, 0.99994]
narrow = compare([100 * w for w in wobble], [100.64 * w * f for w, f in zip(wobble, flat)], better = "higher")
rows = table([{"metric": c.metric, "index": c.index, "95 % CI": c.ci_range} for c in [tiny, narrow]])
`)
	md := g["rows"].(*table.Table).Markdown()
	for i, name := range []string{"tiny", "narrow"} {
		c := g[name].(*Comparison)
		lo, hi := parseRange(t, c.RatioRange())
		if hi-lo > 1.5 || (name == "tiny" && hi > 1) {
			t.Fatalf("%s: the case needs a narrow interval or a tiny index, got %s", name, c.RatioRange())
		}
		inside := func(what, s string) {
			t.Helper()
			x, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
			if err != nil || x < lo || x > hi {
				t.Errorf("%s: %s shows the index as %q, outside the shown interval %s", name, what, s, c.RatioRange())
			}
		}
		inside("the table", tableCell(t, md, i, 1))
		v, _ := c.Attr("index")
		f, _ := starlark.AsFloat(v)
		inside("c.index", strconv.FormatFloat(f, 'g', -1, 64))
		inside("the JSON record", strconv.FormatFloat(toF(c.JSON().(map[string]any)["index"]), 'g', -1, 64))
		inside("the bar line", barAfter(t, c.Markdown()))
		inside("the HTML bar line", barAfter(t, c.HTML()))
		if !strings.Contains(c.Line(), "B "+c.Shown().Index+" (95 % CI "+c.RatioRange()+")") {
			t.Errorf("%s: the sentence does not show the index %s with its interval: %s", name, c.Shown().Index, c.Line())
		}
	}
}

func parseRange(t *testing.T, r string) (float64, float64) {
	t.Helper()
	lo, hi, ok := strings.Cut(r, " to ")
	l, err1 := strconv.ParseFloat(lo, 64)
	h, err2 := strconv.ParseFloat(hi, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("ci_range %q is not \"LOW to HIGH\"", r)
	}
	return l, h
}

// tableCell is column col of data row row of a Markdown table.
func tableCell(t *testing.T, md string, row, col int) string {
	t.Helper()
	var rows [][]string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "| ---") && !strings.HasPrefix(l, "|---") {
			cells := strings.Split(strings.Trim(l, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		}
	}
	if row+1 >= len(rows) || col >= len(rows[row+1]) {
		t.Fatalf("no cell %d,%d in\n%s", row, col, md)
	}
	return rows[row+1][col]
}

var afterIndex = regexp.MustCompile(`\| after [█▏▶]+ ([0-9.,]+)`)

func barAfter(t *testing.T, s string) string {
	t.Helper()
	m := afterIndex.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no bar line in %s", s)
	}
	return m[1]
}

func toF(x any) float64 {
	switch x := x.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return -1
}

// TestShownIndexSurvivesTables: over indexes from 0.0123 to 54,321 and
// intervals from a thousandth of a point to half the index wide, the shown
// index as a table prints it (fmtnum.Float, four significant
// digits) lies inside the shown interval, and the shown interval holds the
// computed one.
func TestShownIndexSurvivesTables(t *testing.T) {
	for _, index := range []float64{0.0123, 0.19, 0.987, 5.3, 9.996, 61.37, 99.97, 100.64, 999.96, 1234.56, 54321.7} {
		for _, rel := range []float64{1e-5, 1e-4, 4e-4, 3e-3, 0.02, 0.3} {
			for _, skew := range []float64{0.1, 0.5, 0.9} {
				low, high := index*(1-2*rel*skew), index*(1+2*rel*(1-skew))
				sh := stats.ShowIndex(index, low, high)
				lo, _ := strconv.ParseFloat(sh.Low, 64)
				hi, _ := strconv.ParseFloat(sh.High, 64)
				x, err := strconv.ParseFloat(strings.ReplaceAll(fmtnum.Float(sh.Value()), ",", ""), 64)
				if err != nil || x < lo || x > hi || lo > low || hi < high {
					t.Errorf("index %g in [%g, %g]: shown %s in %s to %s, a table shows %s", index, low, high,
						sh.Index, sh.Low, sh.High, fmtnum.Float(sh.Value()))
				}
			}
		}
	}
}
