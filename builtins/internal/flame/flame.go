// Package flame draws profiles as flame graphs in inline SVG, for the
// record. It draws an icicle per arm (the root on top, callees below, each
// frame as wide as its share of CPU), a differential one whose colour is
// the change in CPU per request, and each arm of a differential at its own
// scale with that colour (Arm). No script and nothing fetched (the record's
// Content-Security-Policy forbids both): a frame's <title> is what a browser
// shows on hover, and it carries the frame's name and figures. Output is
// deterministic, and bounded: frames narrower than MinWidth are coalesced
// into one, the depth is capped.
package flame

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime/record/svgtext"
)

// Options shape a flame graph; the zero value is the default.
type Options struct {
	Title string
	// Width is the drawing's width in px; 0 means 1200.
	Width int
	// MinWidth is the width in px below which sibling frames are drawn as
	// one; 0 means 2.
	MinWidth float64
	// MaxDepth caps the rows drawn; 0 means 64.
	MaxDepth int
	// UsPerReq, when above 0, is the whole target's CPU per request, so a
	// frame's title says its µs per request too.
	UsPerReq float64
}

func (o Options) withDefaults() Options {
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.MinWidth <= 0 {
		o.MinWidth = 2
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 64
	}
	return o
}

// Geometry of a row and of the text in it (monospace: every character
// takes 0.6 of the font size).
const (
	rowH     = 17
	fontPx   = 11
	charPx   = 0.6 * fontPx
	headerH  = 40
	padPx    = 3
	moreName = "…"
)

// node is a frame to draw.
type node struct {
	name     string
	value    float64 // what the width is proportional to
	title    string
	fill     string
	share    float64 // written as data-share
	children []*node
}

// Icicle draws one profile (an arm's runs merged with profile.Merge).
func Icicle(p *profile.Profile, o Options) []byte {
	o = o.withDefaults()
	root := &node{name: "all", value: float64(p.CPUNs), share: 1}
	for _, s := range p.Stacks {
		n := root
		for _, fr := range s.Frames {
			n = n.child(fr)
			n.value += float64(s.CPUNs)
		}
	}
	selfNs := map[*node]float64{}
	root.walk(func(n *node) {
		kids := 0.0
		for _, c := range n.children {
			kids += c.value
		}
		selfNs[n] = n.value - kids
	})
	total := float64(p.CPUNs)
	root.walk(func(n *node) {
		n.share = n.value / total
		n.title = fmt.Sprintf("%s — %s of CPU, self %s", n.name, pct(n.share), pct(selfNs[n]/total))
		if o.UsPerReq > 0 {
			n.title += fmt.Sprintf(", %s µs per request", Num(n.share*o.UsPerReq))
		}
		n.fill = warm(n.name)
	})
	root.title = fmt.Sprintf("all — %d samples, %s of CPU", p.Samples, msString(p.CPUNs))
	if o.UsPerReq > 0 {
		root.title += fmt.Sprintf(", %s µs per request", Num(o.UsPerReq))
	}
	sub := fmt.Sprintf("%d samples; width = share of CPU; hover a frame for its figures", p.Samples)
	return render(root, o, sub, nil)
}

func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	c := &node{name: name}
	n.children = append(n.children, c)
	return c
}

func (n *node) walk(fn func(*node)) {
	fn(n)
	for _, c := range n.children {
		c.walk(fn)
	}
}

// render lays the tree out (children by name, left to right, as
// flamegraph.pl does, so two arms' graphs line up) and writes the SVG.
func render(root *node, o Options, subtitle string, legend func(*strings.Builder, Options)) []byte {
	rows := 0
	var b strings.Builder
	var body strings.Builder
	scale := float64(o.Width) / math.Max(root.value, 1e-300)
	var draw func(n *node, x float64, depth int)
	draw = func(n *node, x float64, depth int) {
		w := n.value * scale
		rows = max(rows, depth+1)
		frame(&body, n, x, float64(headerH+depth*rowH), w)
		if depth+1 >= o.MaxDepth {
			return
		}
		cx := x
		for _, c := range coalesce(n.children, o.MinWidth/scale) {
			draw(c, cx, depth+1)
			cx += c.value * scale
		}
	}
	draw(root, 0, 0)
	h := headerH + rows*rowH + 4
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="flame" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="%d" role="img" aria-label="%s">`,
		o.Width, h, o.Width, h, fontPx, esc(o.Title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`, o.Width, h)
	fmt.Fprintf(&b, `<text x="%d" y="15" font-size="13" font-weight="bold">%s</text>`, padPx, esc(o.Title))
	fmt.Fprintf(&b, `<text x="%d" y="31" fill="#555555">%s</text>`, padPx, esc(subtitle))
	if legend != nil {
		legend(&b, o)
	}
	b.WriteString(body.String())
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// coalesce orders children by name and draws those narrower than min as
// one frame, so a profile of thousands of tiny frames stays a drawing of
// bounded size and the narrow ones' time is not mistaken for self time.
func coalesce(children []*node, min float64) []*node {
	kids := slices.Clone(children)
	slices.SortFunc(kids, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	var out, small []*node
	for _, c := range kids {
		if c.value < min {
			small = append(small, c)
		} else {
			out = append(out, c)
		}
	}
	switch len(small) {
	case 0:
	case 1:
		out = append(out, small[0])
	default:
		m := &node{name: moreName, fill: "#cccccc"}
		for _, c := range small {
			m.value += c.value
			m.share += c.share
		}
		m.title = fmt.Sprintf("%d frames too narrow to draw — %s of CPU together", len(small), pct(m.share))
		out = append(out, m)
	}
	return out
}

// frame writes one frame: a group carrying its name and share for a
// reader (and a test) of the DOM, the title a browser shows on hover, the
// box, and the name cut to fit.
func frame(b *strings.Builder, n *node, x, y, w float64) {
	fmt.Fprintf(b, `<g data-name="%s" data-share="%.4f"><title>%s</title>`, esc(n.name), n.share, esc(n.title))
	fmt.Fprintf(b, `<rect x="%.2f" y="%.0f" width="%.2f" height="%d" fill="%s" stroke="#ffffff" stroke-width="0.5"/>`,
		x, y, w, rowH-1, n.fill)
	if label := fit(n.name, w); label != "" {
		fmt.Fprintf(b, `<text x="%.2f" y="%.0f">%s</text>`, x+padPx, y+rowH-5, esc(label))
	}
	b.WriteString("</g>")
}

// fit cuts name to the characters that fit in w px, marking a cut with
// "..", or "" when not three characters fit.
func fit(name string, w float64) string {
	n := int((w - 2*padPx) / charPx)
	if n < 3 {
		return ""
	}
	if utf8.RuneCountInString(name) <= n {
		return name
	}
	r := []rune(name)
	return string(r[:n-2]) + ".."
}

// warm is a flamegraph.pl-like colour, the same for a name every time.
func warm(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + v%50
	g := 80 + (v>>8)%150
	bl := (v >> 16) % 55
	return fmt.Sprintf("#%02x%02x%02x", r, g, bl)
}

// esc escapes a name or a label (svgtext.Escape): a function is named by
// whoever wrote the program profiled, and a name holding "onerror=" made
// the record refuse the whole figure.
func esc(s string) string { return svgtext.Escape(s) }

func pct(x float64) string { return fmt.Sprintf("%.2f %%", 100*x) }

func msString(ns int64) string { return fmt.Sprintf("%.0f ms", float64(ns)/1e6) }

// Num writes a figure to about three significant digits, as the flame
// graphs' labels and the profile tables beside them show it.
func Num(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}
