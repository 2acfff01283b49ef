package plot

import (
	"encoding/json"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/starval"
	"github.com/benchbook/benchbook/runtime/record/browsertest"
)

// textBoxes measures every text of an SVG as headless Chromium lays it
// out: its box relative to the SVG, and the SVG's own size last.
const textBoxes = `
  var svg = document.querySelector("svg"), r = svg.getBoundingClientRect();
  var out = Array.prototype.map.call(svg.querySelectorAll("text"), function (t) {
    var b = t.getBoundingClientRect();
    return {s: t.textContent, x0: b.left - r.left, x1: b.right - r.left, y0: b.top - r.top, y1: b.bottom - r.top};
  });
  out.push({s: "", x0: 0, x1: r.width, y0: 0, y1: r.height});
  return JSON.stringify(out);`

type textBox struct {
	S              string
	X0, X1, Y0, Y1 float64
}

// TestPairsStripLegibleInBrowser: on a busy box (load 13.2 -> 13.0, as a
// user's 4-pair study had) the strip's numbers ran together
// ("13.2→13.013.0→13.4") and its row label was clipped at the left ("her
// CPU (cores)"). Measured as Chromium draws it: no two texts overlap and
// every text lies inside the figure.
func TestPairsStripLegibleInBrowser(t *testing.T) {
	fig, err := call(t, "pairs", starlark.Tuple{busyExperiment(4)})
	if err != nil {
		t.Fatal(err)
	}
	seen := checkTextsInBrowser(t, fig.SVG())
	for _, want := range []string{"other CPU (cores)", "load 1m"} {
		if !seen[want] {
			t.Errorf("the strip lacks its row %q", want)
		}
	}
}

// checkTextsInBrowser lays svg out in headless Chromium and fails t for
// every text outside the figure and every two texts that overlap; it
// returns the texts seen.
func checkTextsInBrowser(t *testing.T, svg []byte) map[string]bool {
	t.Helper()
	page := "<!doctype html><html><head>\n<meta charset=\"utf-8\"></head><body style=\"margin:0\">" + string(svg) + "</body></html>"
	var boxes []textBox
	if err := json.Unmarshal([]byte(browsertest.Eval(t, page, textBoxes)), &boxes); err != nil {
		t.Fatal(err)
	}
	frame := boxes[len(boxes)-1]
	texts := boxes[:len(boxes)-1]
	seen := map[string]bool{}
	for i, a := range texts {
		seen[a.S] = true
		if a.X0 < -0.5 || a.X1 > frame.X1+0.5 || a.Y0 < -0.5 || a.Y1 > frame.Y1+0.5 {
			t.Errorf("%q lies outside the figure: x %.1f..%.1f of %.1f, y %.1f..%.1f of %.1f", a.S, a.X0, a.X1, frame.X1, a.Y0, a.Y1, frame.Y1)
		}
		for _, b := range texts[i+1:] {
			if a.S != "" && b.S != "" && a.X0 < b.X1-0.5 && b.X0 < a.X1-0.5 && a.Y0 < b.Y1-0.5 && b.Y0 < a.Y1-0.5 {
				t.Errorf("%q (x %.1f..%.1f) and %q (x %.1f..%.1f) overlap", a.S, a.X0, a.X1, b.S, b.X0, b.X1)
			}
		}
	}
	return seen
}

// busyExperiment is n ABAB pairs measured at a load average around 13.
func busyExperiment(n int) starlark.Value {
	a, b := make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], b[i] = 1900+float64(10*i), 11700+float64(20*i)
	}
	exp := valueExperiment(map[string][]float64{"A": a, "B": b})
	d := starlark.StringDict{}
	for _, k := range []string{"arms", "runs"} {
		d[k] = starval.Attr(exp, k)
	}
	var order, gates []starlark.Value
	for p := range n {
		arms := []string{"A", "B"}
		if p%2 == 1 {
			arms = []string{"B", "A"}
		}
		for j, arm := range arms {
			order = append(order, starlark.Tuple{starlark.MakeInt(p), starlark.String(arm)})
			before := 13.2 - 0.2*float64(p) + 0.1*float64(j)
			gates = append(gates, starlarkstruct.FromStringDict(starlark.String("struct"), starlark.StringDict{
				"load1_before": starlark.Float(before), "load1_after": starlark.Float(before - 0.2 + 0.4*float64(j)),
				"foreign_cpu": starlark.Float(0.45 + 0.01*float64(p)), "busy": starlark.Bool(false)}))
		}
	}
	d["order"], d["gates"] = list(order...), list(gates...)
	return starlarkstruct.FromStringDict(starlarkstruct.Default, d)
}
