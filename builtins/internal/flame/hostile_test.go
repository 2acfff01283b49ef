package flame

import (
	"strconv"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/internal/profile"
	"github.com/benchbook/benchbook/runtime/record"
)

// TestHostileNamesKeepTheFigure: a function named with what the record's
// SVG check refuses ("onerror=" in an attribute, "javascript:",
// "url(http") made the whole flame graph "figure rejected". Names are
// escaped so the check passes, and an XML parser (not ours) reads every
// name back exactly, in the data-name attribute and in the <title>.
func TestHostileNamesKeepTheFigure(t *testing.T) {
	names := []string{`x onerror=alert(1)`, `y" onload="alert(2)`, `javascript:alert(3)`, `url(http://evil.example/z)`, `<script>alert(4)</script>`, `a onclick =b`}
	folded := ""
	for i, n := range names {
		folded += "main;" + n + " " + strconv.Itoa(1000+i) + "\n"
	}
	p, err := profile.ParseFolded(strings.NewReader(folded), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"plain", "title onerror=x javascript:y"} {
		svg := Icicle(p, Options{Title: title})
		if _, reason := record.CheckedSVG(svg); reason != "" {
			t.Fatalf("title %q: %s", title, reason)
		}
		seen := map[string]bool{}
		for _, f := range parseSVG(t, svg) {
			seen[f.Name] = true
			if !strings.HasPrefix(f.Title, f.Name) {
				t.Errorf("title %q for %q", f.Title, f.Name)
			}
		}
		for _, n := range names {
			if !seen[n] {
				t.Errorf("%q not drawn (names read back: %v)", n, seen)
			}
		}
	}
}

// The differential and each arm's graph keep their figure too, with
// hostile function names and hostile arm labels (the legend names B).
func TestHostileNamesKeepTheArmFigures(t *testing.T) {
	names := []string{`x onerror=alert(1)`, `javascript:alert(3)`, `url(http://evil.example/z)`, `<script>alert(4)</script>`}
	var pairs [][2]string
	for i := range 3 {
		fa, fb := "", ""
		for j, n := range names {
			fa += "main;" + n + " " + strconv.Itoa(100+10*j+i) + "\n"
			fb += "main;" + n + " " + strconv.Itoa(300-10*j+2*i) + "\n"
		}
		pairs = append(pairs, [2]string{fa, fb})
	}
	d := diffOf(t, pairs, 1_000_000, [2]int64{100, 100}, profile.DiffOptions{ALabel: "a onerror=x", BLabel: "javascript:b"})
	for what, svg := range map[string][]byte{"differential": Differential(d, Options{}), "A": Arm(d, SideA, Options{}), "B": Arm(d, SideB, Options{})} {
		if _, reason := record.CheckedSVG(svg); reason != "" {
			t.Errorf("%s: %s", what, reason)
		}
		seen := 0
		for _, f := range parseSVG(t, svg) {
			for _, n := range names {
				if f.Name == n {
					seen++
				}
			}
		}
		if seen != len(names) {
			t.Errorf("%s: %d of the %d names read back", what, seen, len(names))
		}
	}
}
