package flame

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime/record/browsertest"
	"github.com/benchbook/benchbook/runtime/testsupport/golden"
)

func hotProfile(t *testing.T) *profile.Profile {
	t.Helper()
	f, err := os.Open("testdata/hotserver.folded")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.ParseFolded(f, 2004008)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// swapDiff is a differential of three pairs where B moves work from hotA
// to hotB, with a little noise, and a frame that does not change.
func swapDiff(t *testing.T) *profile.Diff {
	t.Helper()
	var pairs [][2]string
	for i := range 3 {
		pairs = append(pairs, [2]string{
			fmt.Sprintf("main;serve;hotA %d\nmain;serve;hotB %d\nmain;serve;parse %d\nmain;gc %d\n", 500+7*i, 100-3*i, 150+5*i, 40+i),
			fmt.Sprintf("main;serve;hotA %d\nmain;serve;hotB %d\nmain;serve;parse %d\nmain;gc %d\n", 102+4*i, 490-6*i, 148+3*i, 41-i)})
	}
	return diffOf(t, pairs, 2_000_000, [2]int64{1000, 1000}, profile.DiffOptions{})
}

// diffOf compares pairs of folded runs (A's text, B's text) sampled at
// period, whose runs served requests[0] (A) and requests[1] (B) requests.
func diffOf(t *testing.T, pairs [][2]string, period int64, requests [2]int64, o profile.DiffOptions) *profile.Diff {
	t.Helper()
	var runs [2][]profile.Run
	for _, pair := range pairs {
		for arm, text := range pair {
			p, err := profile.ParseFolded(strings.NewReader(text), period)
			if err != nil {
				t.Fatal(err)
			}
			runs[arm] = append(runs[arm], profile.Run{Profile: p, Cost: profile.Cost{Requests: requests[arm]}})
		}
	}
	d, err := profile.Compare(runs[0], runs[1], o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// svgFrame is one <g> of a drawing, as an XML parser (not ours) reads it.
type svgFrame struct {
	Name  string  `xml:"data-name,attr"`
	Share float64 `xml:"data-share,attr"`
	Title string  `xml:"title"`
	Rect  struct {
		X     float64 `xml:"x,attr"`
		Width float64 `xml:"width,attr"`
		Fill  string  `xml:"fill,attr"`
	} `xml:"rect"`
	Text string `xml:"text"`
}

func parseSVG(t *testing.T, svg []byte) []svgFrame {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	var out []svgFrame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "g" && len(se.Attr) > 0 && se.Attr[0].Name.Local == "data-name" {
			var f svgFrame
			if err := dec.DecodeElement(&f, &se); err != nil {
				t.Fatal(err)
			}
			out = append(out, f)
		}
	}
}

func TestIcicleGolden(t *testing.T) {
	svg := Icicle(hotProfile(t), Options{Title: "hot server, arm A", UsPerReq: 150})
	golden.Check(t, "testdata/icicle.svg", svg)
	if again := Icicle(hotProfile(t), Options{Title: "hot server, arm A", UsPerReq: 150}); string(again) != string(svg) {
		t.Error("two drawings of one profile differ")
	}
}

func TestDifferentialGolden(t *testing.T) {
	golden.Check(t, "testdata/differential.svg", Differential(swapDiff(t), Options{Title: "B against A"}))
}

// What the drawing says must be what the profile says: each frame's
// share and width, names that fit, no script.
func TestIcicleFrames(t *testing.T) {
	p := hotProfile(t)
	svg := Icicle(p, Options{Title: "t"})
	if strings.Contains(string(svg), "<script") {
		t.Fatal("script in the SVG")
	}
	shares := map[string]float64{}
	for _, f := range p.Functions() {
		shares[f.Name] = f.Total
	}
	frames := parseSVG(t, svg)
	var hot *svgFrame
	for i, f := range frames {
		if f.Name == "main.hotA" {
			if hot != nil {
				t.Fatal("main.hotA drawn twice: it has one caller here")
			}
			hot = &frames[i]
		}
		if f.Text != "" && f.Text != f.Name && !(strings.HasSuffix(f.Text, "..") && strings.HasPrefix(f.Name, strings.TrimSuffix(f.Text, ".."))) {
			t.Errorf("frame %q labelled %q", f.Name, f.Text)
		}
		if float64(len([]rune(f.Text)))*charPx > f.Rect.Width {
			t.Errorf("label %q (%d chars) overflows its %.1f px", f.Text, len(f.Text), f.Rect.Width)
		}
	}
	if hot == nil {
		t.Fatal("no main.hotA frame")
	}
	if d := hot.Share - shares["main.hotA"]; d > 1e-4 || d < -1e-4 {
		t.Errorf("main.hotA drawn with share %.4f, the profile's is %.4f", hot.Share, shares["main.hotA"])
	}
	if w := hot.Rect.Width / 1200; w-hot.Share > 1e-3 || hot.Share-w > 1e-3 {
		t.Errorf("main.hotA is %.1f px wide of 1200 for a share of %.4f", hot.Rect.Width, hot.Share)
	}
	if !strings.Contains(hot.Title, fmt.Sprintf("%.2f %%", 100*shares["main.hotA"])) {
		t.Errorf("title %q lacks the share", hot.Title)
	}
}

// A profile of thousands of narrow frames draws in bounded size: the
// narrow ones become one frame per parent.
func TestIcicleBounded(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "main;f%04d;g%04d 1\n", i, i)
	}
	b.WriteString("main;big 5000\n")
	p, err := profile.ParseFolded(strings.NewReader(b.String()), 1)
	if err != nil {
		t.Fatal(err)
	}
	svg := Icicle(p, Options{})
	frames := parseSVG(t, svg)
	t.Logf("%d frames, %d bytes", len(frames), len(svg))
	if len(frames) > 10 || len(svg) > 10_000 {
		t.Errorf("%d frames, %d bytes for 10,002 narrow frames", len(frames), len(svg))
	}
	var more bool
	for _, f := range frames {
		more = more || strings.Contains(f.Title, "5000 frames too narrow")
	}
	if !more {
		t.Error("the narrow frames are not said to be coalesced")
	}
}

// The differential colours a frame only where its interval excludes 0:
// hotA blue (B spends less), hotB red, the unchanged ones grey.
func TestDifferentialColours(t *testing.T) {
	d := swapDiff(t)
	frames := parseSVG(t, Differential(d, Options{}))
	got := map[string]svgFrame{}
	for _, f := range frames {
		got[f.Name] = f
	}
	for name, want := range map[string]string{"hotA": "blue", "hotB": "red", "gc": "grey"} {
		f := got[name]
		r, _ := strconv.ParseUint(f.Rect.Fill[1:3], 16, 8)
		bl, _ := strconv.ParseUint(f.Rect.Fill[5:7], 16, 8)
		kind := "grey"
		switch {
		case f.Rect.Fill == "#d9d9d9":
		case bl == 255 && r < 255:
			kind = "blue"
		case r == 255 && bl < 255:
			kind = "red"
		}
		if kind != want {
			t.Errorf("%s: fill %s (%s), want %s; title %q", name, f.Rect.Fill, kind, want, f.Title)
		}
	}
	if !strings.Contains(got["hotA"].Title, "IMPROVES") || !strings.Contains(got["hotB"].Title, "WORSENS") {
		t.Errorf("titles %q / %q", got["hotA"].Title, got["hotB"].Title)
	}
}

const page = "<!DOCTYPE html>\n<html><head>\n<meta charset=\"utf-8\">\n" +
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n" +
	"<title>flame</title></head><body>\n%s</body></html>\n"

// In a browser, under the record's policy, a reader gets main.hotA's share
// from the frame (its hover title) and the frame is drawn as wide as that
// share of the graph.
func TestIcicleInBrowser(t *testing.T) {
	p := hotProfile(t)
	var want float64
	for _, f := range p.Functions() {
		if f.Name == "main.hotA" {
			want = f.Total
		}
	}
	html := fmt.Sprintf(page, Icicle(p, Options{Title: "arm A"}))
	browsertest.Check(t, html)
	got := browsertest.Eval(t, html, `
var g = document.querySelector('g[data-name="main.hotA"]');
var svg = g.ownerSVGElement.getBoundingClientRect();
var r = g.querySelector('rect').getBoundingClientRect();
return g.querySelector('title').textContent + "|" + (r.width / svg.width);`)
	title, frac, ok := strings.Cut(got, "|")
	if !ok {
		t.Fatalf("browser said %q", got)
	}
	var share float64
	if _, err := fmt.Sscanf(title[strings.Index(title, "— ")+len("— "):], "%f %%", &share); err != nil {
		t.Fatalf("title %q: %v", title, err)
	}
	if d := share/100 - want; d > 5e-5 || d < -5e-5 {
		t.Errorf("the browser shows main.hotA at %.2f %%, the profile says %.4f %%", share, 100*want)
	}
	w, _ := strconv.ParseFloat(frac, 64)
	if d := w - want; d > 2e-3 || d < -2e-3 {
		t.Errorf("drawn at %.4f of the width for a share of %.4f", w, want)
	}
	t.Logf("browser: %q", got)
}
