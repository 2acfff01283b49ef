package flame

import (
	"fmt"
	"math"
	"strings"

	"github.com/benchbook/benchbook/builtins/internal/profile"
)

// Differential draws a differential profile's call tree: a frame is as
// wide as its mean CPU per request over both arms (so a frame that
// vanished in B still shows, and children never overflow their parent),
// and coloured by B - A only where its interval excludes 0: blue where B
// spends less, red where it spends more, deeper for a larger change; grey
// where the data do not show a change.
func Differential(d *profile.Diff, o Options) []byte {
	o = o.withDefaults()
	maxAbs := 0.0
	var walk func(*profile.DiffNode)
	walk = func(n *profile.DiffNode) {
		if n.Verdict != "~" {
			maxAbs = math.Max(maxAbs, math.Abs(n.Delta))
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(d.Tree)
	root := diffNode(d, d.Tree, maxAbs, (d.Tree.A+d.Tree.B)/2)
	sub := fmt.Sprintf("%s against %s, %d pairs; width: mean CPU/request; blue: %s spends less, red: more, grey: no change shown",
		d.BLabel, d.ALabel, d.Pairs, d.BLabel)
	return render(root, o, sub, func(b *strings.Builder, o Options) { legend(b, o, maxAbs) })
}

func diffNode(d *profile.Diff, n *profile.DiffNode, maxAbs, whole float64) *node {
	out := &node{name: n.Name, value: math.Max((n.A+n.B)/2, 0), fill: diffColour(n.Estimate, maxAbs)}
	if whole > 0 {
		out.share = out.value / whole
	}
	out.title = diffTitle(d, n)
	for _, c := range n.Children {
		out.children = append(out.children, diffNode(d, c, maxAbs, whole))
	}
	return out
}

func diffTitle(d *profile.Diff, n *profile.DiffNode) string {
	e := n.Estimate
	s := fmt.Sprintf("%s — %s %s µs/req, %s %s µs/req, %s - %s %s µs/req",
		n.Name, d.ALabel, Num(e.A), d.BLabel, Num(e.B), d.BLabel, d.ALabel, signed(e.Delta))
	if !math.IsNaN(e.Low) {
		s += fmt.Sprintf(" (%.1f %% CI %s to %s)", 100*e.Confidence, signed(e.Low), signed(e.High))
	}
	if e.Verdict != "~" {
		return s + ", " + e.Verdict
	}
	return s + ", ~: " + e.Reason
}

func signed(x float64) string {
	if x > 0 {
		return "+" + Num(x)
	}
	return Num(x)
}

// diffColour: grey for no shown change; otherwise white to full blue (less
// CPU in B) or red (more), by the change's size against the largest.
func diffColour(e profile.Estimate, maxAbs float64) string {
	if e.Verdict == "~" || maxAbs == 0 {
		return "#d9d9d9"
	}
	return ramp(e.Delta / maxAbs)
}

// ramp maps -1..1 to blue .. light .. red; the lightest shown change is
// still tinted, so it never reads grey, and the deepest stays light enough
// for black names on it.
func ramp(x float64) string {
	a := 0.2 + 0.45*math.Min(math.Abs(x), 1)
	light := uint8(math.Round(255 * (1 - a)))
	if x < 0 {
		return fmt.Sprintf("#%02x%02x%02x", light, light+uint8(math.Round(40*(1-a))), 255)
	}
	return fmt.Sprintf("#%02x%02x%02x", 255, light, light)
}

// legend draws the colour scale, right-aligned in the header, with the
// largest change shown at its ends.
func legend(b *strings.Builder, o Options, maxAbs float64) {
	const sw, n = 14, 5
	x := float64(o.Width) - float64(2*n+1)*sw - padPx
	fmt.Fprintf(b, `<g class="legend"><title>colour: change in CPU per request, B - A, where its interval excludes 0</title>`)
	for i := -n; i <= n; i++ {
		fill := ramp(float64(i) / n)
		if i == 0 {
			fill = "#d9d9d9"
		}
		fmt.Fprintf(b, `<rect x="%.0f" y="4" width="%d" height="12" fill="%s"/>`, x+float64(i+n)*sw, sw, fill)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="14" text-anchor="end" fill="#555555">%s</text>`, x-4, esc(signed(-maxAbs)+" µs/req"))
	fmt.Fprintf(b, `<text x="%d" y="31" text-anchor="end" fill="#555555">%s</text></g>`, o.Width-padPx, esc("up to "+signed(maxAbs)+" µs/req"))
}

// Side is one arm of a differential profile.
type Side int

const (
	SideA Side = iota
	SideB
)

// Arm draws one arm of a differential profile at its own scale: a frame
// is as wide as its mean CPU per request in that arm (frames the arm never
// ran are not drawn), so when one arm costs 50 times the other, a
// function of the cheap arm only is a labelled frame in that arm's graph,
// where the differential (sized by the mean of both) leaves it a sliver.
// The colour is the frame's change where its interval excludes 0, as a
// share of the frame's larger arm: full red where all of it is new in B,
// full blue where all of it is gone in B; grey where the data do not show
// a change.
func Arm(d *profile.Diff, side Side, o Options) []byte {
	o = o.withDefaults()
	label := d.ALabel
	if side == SideB {
		label = d.BLabel
	}
	root := armNode(d, d.Tree, side, armValue(d.Tree, side))
	sub := fmt.Sprintf("width: %s's CPU per request, the mean of its %d runs (%s µs); colour: %s - %s as a share of the frame, where its interval excludes 0",
		label, d.Pairs, Num(root.value), d.BLabel, d.ALabel)
	return render(root, o, sub, func(b *strings.Builder, o Options) { armLegend(b, o, d.BLabel) })
}

func armValue(n *profile.DiffNode, side Side) float64 {
	if side == SideB {
		return math.Max(n.B, 0)
	}
	return math.Max(n.A, 0)
}

func armNode(d *profile.Diff, n *profile.DiffNode, side Side, whole float64) *node {
	out := &node{name: n.Name, value: armValue(n, side), fill: armColour(n.Estimate), title: diffTitle(d, n)}
	if whole > 0 {
		out.share = out.value / whole
	}
	for _, c := range n.Children {
		if armValue(c, side) > 0 {
			out.children = append(out.children, armNode(d, c, side, whole))
		}
	}
	return out
}

// armColour: grey for no shown change; otherwise the change over the
// frame's larger arm, -1 (gone in B) to 1 (new in B).
func armColour(e profile.Estimate) string {
	big := math.Max(e.A, e.B)
	if e.Verdict == "~" || big <= 0 {
		return "#d9d9d9"
	}
	return ramp(e.Delta / big)
}

// armLegend draws the arm graphs' colour scale: a frame's change as a
// share of its larger arm.
func armLegend(b *strings.Builder, o Options, bLabel string) {
	const sw, n = 14, 5
	x := float64(o.Width) - float64(2*n+1)*sw - padPx
	b.WriteString(`<g class="legend"><title>colour: the change in a frame's CPU per request, B - A, as a share of its larger arm, where its interval excludes 0</title>`)
	for i := -n; i <= n; i++ {
		fill := ramp(float64(i) / n)
		if i == 0 {
			fill = "#d9d9d9"
		}
		fmt.Fprintf(b, `<rect x="%.0f" y="4" width="%d" height="12" fill="%s"/>`, x+float64(i+n)*sw, sw, fill)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="14" text-anchor="end" fill="#555555">%s</text>`, x-4, esc("gone in "+bLabel))
	fmt.Fprintf(b, `<text x="%d" y="31" text-anchor="end" fill="#555555">%s</text></g>`, o.Width-padPx, esc("new in "+bLabel))
}
