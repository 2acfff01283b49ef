package starprofile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gtext "github.com/yuin/goldmark/text"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/flame"
	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/record/browsertest"
)

func folded(t *testing.T, text string, period int64) *profile.Profile {
	t.Helper()
	p, err := profile.ParseFolded(strings.NewReader(text), period)
	if err != nil {
		t.Fatal(err)
	}
	p.Source, p.Event, p.Window = "perf", profile.Event, 2*time.Second
	return p
}

func hotData(t *testing.T) *Data {
	t.Helper()
	text, err := os.ReadFile("../../flame/testdata/hotserver.folded")
	if err != nil {
		t.Fatal(err)
	}
	d, err := FromProfile(folded(t, string(text), 2004008), []string{"process hotserver"}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A profile survives the cache: the value read back shows what the value
// stored did, attribute by attribute.
func TestValueRoundTrip(t *testing.T) {
	v, err := New(hotData(t))
	if err != nil {
		t.Fatal(err)
	}
	data, err := codec.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, codec.Types{"profile": DecodeProfile})
	if err != nil {
		t.Fatal(err)
	}
	w := back.(*Value)
	for _, name := range v.AttrNames() {
		if name == "function" {
			continue
		}
		a, _ := v.Attr(name)
		b, _ := w.Attr(name)
		if a.String() != b.String() {
			t.Errorf("%s: %.200s read back as %.200s", name, a, b)
		}
	}
	if eq, err := starlark.Equal(v, w); err != nil || !eq {
		t.Errorf("the profile read back is not equal to the one stored: %v", err)
	}
	if v.HTML() != w.HTML() || v.String() != w.String() {
		t.Error("the display differs once read back")
	}
}

// us_per_req of a function is its share of the samples' CPU over the
// run's requests: checked against the folded text, counted here.
func TestValueFunctionsPerRequest(t *testing.T) {
	d := hotData(t)
	v, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	var hotA, all int64
	for _, l := range strings.Split(strings.TrimSpace(string(v.p.Folded())), "\n") {
		i := strings.LastIndexByte(l, ' ')
		n, _ := strconv.ParseInt(l[i+1:], 10, 64)
		all += n
		if strings.Contains(l[:i], "main.hotA") {
			hotA += n
		}
	}
	fn, err := v.Attr("function")
	if err != nil {
		t.Fatal(err)
	}
	got, err := starlark.Call(&starlark.Thread{}, fn, starlark.Tuple{starlark.String("main.hotA")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	us, _ := starlark.AsFloat(attr(t, got, "us_per_req"))
	want := float64(hotA) * 2004008 / 1e3 / 1500
	if math.Abs(us-want) > 1e-9*want {
		t.Errorf("main.hotA: %g µs/req, the folded text says %g", us, want)
	}
	if all != d.Samples {
		t.Errorf("folded text has %d samples, the data %d", all, d.Samples)
	}
}

func attr(t *testing.T, v starlark.Value, name string) starlark.Value {
	t.Helper()
	x, err := v.(starlark.HasAttrs).Attr(name)
	if err != nil || x == nil {
		t.Fatalf("no .%s on %s: %v", name, v, err)
	}
	return x
}

// swap is pairs runs where B moves work from hotA to hotB, with a little
// noise, and a frame that does not change.
func swap(t *testing.T, pairs int) (a, b []*Data) {
	t.Helper()
	var texts [][2]string
	for i := range pairs {
		texts = append(texts, [2]string{
			fmt.Sprintf("main;serve;hotA %d\nmain;serve;hotB %d\nmain;serve;parse %d\nmain;gc %d\n", 500+7*i, 100-3*i, 150+5*i, 40+i),
			fmt.Sprintf("main;serve;hotA %d\nmain;serve;hotB %d\nmain;serve;parse %d\nmain;gc %d\n", 102+4*i, 490-6*i, 148+3*i, 41-i)})
	}
	return pairsOf(t, texts, 2_000_000, "hot", [2]int64{1000, 1000})
}

// pairsOf makes the runs of pairs of folded texts (A's, B's) sampled at
// period on target, whose runs served requests[0] (A) and requests[1]
// (B) requests.
func pairsOf(t *testing.T, texts [][2]string, period int64, target string, requests [2]int64) (a, b []*Data) {
	t.Helper()
	var runs [2][]*Data
	for _, pair := range texts {
		for arm, text := range pair {
			d, err := FromProfile(folded(t, text, period), []string{target}, requests[arm])
			if err != nil {
				t.Fatal(err)
			}
			runs[arm] = append(runs[arm], d)
		}
	}
	return runs[0], runs[1]
}

// A comparison names both moved functions with the right sign and an
// interval that excludes 0, and reads back from the cache identical.
func TestComparison(t *testing.T) {
	a, b := swap(t, 4)
	c, err := Compare(a, b, Options{ALabel: "A", BLabel: "B"})
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := c.Attr("function")
	for name, want := range map[string]string{"hotA": "IMPROVES", "hotB": "WORSENS", "gc": "~"} {
		f, err := starlark.Call(&starlark.Thread{}, fn, starlark.Tuple{starlark.String(name)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := attr(t, f, "verdict"); string(v.(starlark.String)) != want {
			t.Errorf("%s: %s (%s), want %s", name, v, attr(t, f, "reason"), want)
		}
		ci := attr(t, f, "ci").(starlark.Tuple)
		lo, _ := starlark.AsFloat(ci[0])
		hi, _ := starlark.AsFloat(ci[1])
		d, _ := starlark.AsFloat(attr(t, f, "delta_us_per_req"))
		a, _ := starlark.AsFloat(attr(t, f, "a_us_per_req"))
		bb, _ := starlark.AsFloat(attr(t, f, "b_us_per_req"))
		if math.Abs(d-(bb-a)) > 1e-9 {
			t.Errorf("%s: delta %g is not B - A = %g - %g", name, d, bb, a)
		}
		if excl := lo > 0 || hi < 0; excl != (want != "~") {
			t.Errorf("%s: interval [%g, %g] with verdict %s", name, lo, hi, want)
		}
	}
	if s := c.String(); !strings.Contains(s, "hotA") || !strings.Contains(s, "IMPROVES") {
		t.Errorf("String: %s", s)
	}
	data, err := codec.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := codec.Decode(data, codec.Types{"profile_comparison": DecodeComparison})
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != c.String() || back.(*Comparison).HTML() != c.HTML() || back.(*Comparison).Markdown() != c.Markdown() {
		t.Error("the comparison reads back different")
	}
}

// The headline names the functions whose own code explains the change
// (hotA and hotB), not the root frames whose totals move with everything
// below them (main, serve).
func TestComparisonHeadlineNamesSelfTime(t *testing.T) {
	a, b := swap(t, 4)
	c, err := Compare(a, b, Options{ALabel: "A", BLabel: "B"})
	if err != nil {
		t.Fatal(err)
	}
	got := c.JSON().(map[string]any)
	head := got["headline"].(string)
	t.Log(head)
	if by := got["explained_by"].([]string); len(by) < 2 || by[0] != "hotA" || by[1] != "hotB" {
		t.Errorf("explained by %v, want hotA and hotB first", by)
	}
	_, named, _ := strings.Cut(head, "own code: ")
	for _, root := range []string{"main", "serve"} {
		if strings.Contains(named, root+" ") {
			t.Errorf("the headline names the root frame %s: %s", root, head)
		}
	}
	if !strings.Contains(c.HTML(), "hotA -") || !strings.Contains(c.Markdown(), "hotB +") {
		t.Errorf("the record's headline does not name hotA and hotB:\n%s", c.Markdown())
	}
}

// Runs without requests, or arms of different lengths, are errors.
func TestComparisonRefuses(t *testing.T) {
	a, b := swap(t, 2)
	if _, err := Compare(a, b[:1], Options{ALabel: "A", BLabel: "B"}); err == nil || !strings.Contains(err.Error(), "pairs") {
		t.Errorf("unequal arms: %v", err)
	}
	zero := *b[1]
	zero.Requests = 0
	if _, err := Compare(a, []*Data{b[0], &zero}, Options{ALabel: "A", BLabel: "B"}); err == nil || !strings.Contains(err.Error(), "B run 2 served no request") {
		t.Errorf("a run without requests: %v", err)
	}
}

// The record, in a browser under its own policy: a reader gets hotA's
// figures from the differential graph's frame (its hover title: A, B and
// the change) and from arm A's flame graph (at A's own scale), and each
// frame is drawn as wide as its share.
func TestRecordInBrowser(t *testing.T) {
	a, b := swap(t, 4)
	c, err := Compare(a, b, Options{ALabel: "A", BLabel: "B"})
	if err != nil {
		t.Fatal(err)
	}
	page := checkedPage(t, "profiles", c)
	got := browsertest.Eval(t, page, `
var out = [];
document.querySelectorAll("figure svg").forEach(function (svg) {
  var g = svg.querySelector('g[data-name="hotA"]');
  var box = svg.getBoundingClientRect(), r = g.querySelector("rect").getBoundingClientRect();
  out.push(g.querySelector("title").textContent + "|" + g.getAttribute("data-share") + "|" + (r.width / box.width));
});
return out.join("\n");`)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 {
		t.Fatalf("want hotA in three graphs (differential, A, B), the browser found:\n%s", got)
	}
	// The differential: its title says A, B and B - A as the comparison
	// does, and its width is its mean CPU per request over the root's.
	var hot, root profile.Estimate
	for _, f := range c.d.Functions {
		if f.Name == "hotA" {
			hot = f.Total
		}
	}
	root = c.d.Tree.Estimate
	title, share, width := split3(t, lines[0])
	for _, want := range []string{"A " + flame.Num(hot.A) + " µs/req", "B " + flame.Num(hot.B) + " µs/req", "B - A " + signed(hot.Delta) + " µs/req", "IMPROVES"} {
		if !strings.Contains(title, want) {
			t.Errorf("differential: title %q lacks %q", title, want)
		}
	}
	wantShare := (hot.A + hot.B) / (root.A + root.B)
	if math.Abs(share-wantShare) > 1e-4 || math.Abs(width-wantShare) > 2e-3 {
		t.Errorf("differential: hotA at share %.4f, drawn %.4f of the width; its mean CPU per request is %.4f of the root's", share, width, wantShare)
	}
	// Arm A's graph, at its own scale: hotA's CPU per request in A over
	// A's whole, and the same title.
	title, share, width = split3(t, lines[1])
	want := hot.A / root.A
	if math.Abs(share-want) > 1e-4 || math.Abs(width-want) > 2e-3 || !strings.Contains(title, "A "+flame.Num(hot.A)+" µs/req") {
		t.Errorf("arm A: hotA title %q, share %.4f, width %.4f; its CPU per request in A is %.4f of A's", title, share, width, want)
	}
	t.Logf("browser:\n%s", got)
}

// checkedPage is the HTML record of one cell showing c, checked in a
// browser (no error, no request, every figure drawn).
func checkedPage(t *testing.T, title string, c *Comparison) string {
	t.Helper()
	r := &record.Record{Title: title, Rendered: time.Unix(0, 0), Cells: []record.Cell{
		{Name: "cmp", Source: "compare_profiles(exp)\n", Status: record.StatusRan, Outputs: []starlark.Value{c}},
	}}
	var page strings.Builder
	if err := record.HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	browsertest.Check(t, page.String())
	return page.String()
}

func split3(t *testing.T, line string) (title string, share, width float64) {
	t.Helper()
	parts := strings.Split(line, "|")
	if len(parts) != 3 {
		t.Fatalf("browser said %q", line)
	}
	share, _ = strconv.ParseFloat(parts[1], 64)
	width, _ = strconv.ParseFloat(parts[2], 64)
	return parts[0], share, width
}

// The Markdown record carries the table, the three graphs as SVG files
// and the folded stacks of each arm.
func TestMarkdownRecord(t *testing.T) {
	a, b := swap(t, 3)
	c, err := Compare(a, b, Options{ALabel: "A", BLabel: "B"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := &record.Record{Title: "profiles", Cells: []record.Cell{{Name: "cmp", Status: record.StatusRan, Outputs: []starlark.Value{c}}}}
	if err := record.Markdown(r, filepath.Join(dir, "nb.md")); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "nb.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "nb_files", "*"))
	var svgs, foldeds int
	for _, f := range files {
		data, _ := os.ReadFile(f)
		switch filepath.Ext(f) {
		case ".svg":
			svgs++
			if !strings.Contains(string(md), filepath.Base(f)) || !strings.Contains(string(data), `data-name="hotA"`) {
				t.Errorf("%s: not linked, or without hotA", filepath.Base(f))
			}
		case ".folded":
			foldeds++
			if !strings.Contains(string(data), "main;serve;hotA ") {
				t.Errorf("%s: %q", filepath.Base(f), data)
			}
		}
	}
	if svgs != 3 || foldeds != 2 {
		t.Errorf("%d SVG files and %d folded ones, want 3 and 2: %v", svgs, foldeds, files)
	}
	if !strings.Contains(string(md), "| ` hotA ` |") || !strings.Contains(string(md), "IMPROVES") {
		t.Errorf("the Markdown lacks the table:\n%s", md)
	}
}

// A function's name is the target binary's to choose: in the record it is
// text, never markup, in HTML and in Markdown.
func TestHostileNamesEscaped(t *testing.T) {
	const evil = "<img src=x onerror=alert(1)>|`x`*"
	text := fmt.Sprintf("main;%s 40\nmain;ok 10\n", evil)
	var a, b []*Data
	for i := range 2 {
		da, err := FromProfile(folded(t, text, 1_000_000), []string{"<b>target</b>"}, int64(100+i))
		if err != nil {
			t.Fatal(err)
		}
		a, b = append(a, da), append(b, da)
	}
	c, err := Compare(a, b, Options{ALabel: "<i>A</i>", BLabel: "B"})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := New(a[0])
	r := &record.Record{Title: "t", Cells: []record.Cell{{Name: "c", Status: record.StatusRan, Outputs: []starlark.Value{v, c}}}}
	var page strings.Builder
	if err := record.HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<img", "<b>target", "<i>A"} {
		if strings.Contains(page.String(), bad) {
			t.Errorf("the HTML record holds %q unescaped", bad)
		}
	}
	dir := t.TempDir()
	if err := record.Markdown(r, filepath.Join(dir, "nb.md")); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "nb.md"))
	// Read as GitHub would (goldmark with its table extension): the name
	// may sit in a code span, where it is text; it must not be raw HTML.
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gtext.NewReader(md))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		var raw string
		switch h := n.(type) {
		case *ast.RawHTML:
			for i := 0; i < h.Segments.Len(); i++ {
				seg := h.Segments.At(i)
				raw += string(seg.Value(md))
			}
		case *ast.HTMLBlock:
			for i := 0; i < h.Lines().Len(); i++ {
				seg := h.Lines().At(i)
				raw += string(seg.Value(md))
			}
		}
		if entering && (strings.Contains(raw, "img") || strings.Contains(raw, "<b>")) {
			t.Errorf("the Markdown record holds raw HTML %q", raw)
		}
		return ast.WalkContinue, nil
	})
}
