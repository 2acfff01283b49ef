package metric

import (
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// TestVerdictWarningsBesideTheRowInBothFormats: a headline's few warnings
// show under the decision row, before the collapsed detail, in the
// Markdown record as in the HTML one (the Markdown put them in the detail
// only: a reader of a PR saw a row with no caveat the HTML reader saw).
func TestVerdictWarningsBesideTheRowInBothFormats(t *testing.T) {
	g := startest.MustExec(t, startest.Options{Modules: testModules()}, `
c = compare([100.0, 102.0], [130.0, 133.0])
v = verdict(status = "open", headline = c, summary = "two pairs")
`)
	v := g["v"].(*Verdict)
	ws := v.Headline.otherWarnings()
	if len(ws) == 0 || len(ws) > shownWarnings {
		t.Fatalf("the headline's warnings %q: want 1 to %d for this test", ws, shownWarnings)
	}
	_, detail := v.MarkdownDetail()
	for format, top := range map[string]string{"markdown": v.Markdown(), "html": strings.SplitN(v.HTML(), "<details", 2)[0]} {
		for _, w := range ws {
			if !strings.Contains(top, w) {
				t.Errorf("%s: warning %q not beside the row:\n%s", format, w, top)
			}
		}
	}
	for _, w := range ws {
		if strings.Contains(detail, w) {
			t.Errorf("markdown: warning %q said again in the detail:\n%s", w, detail)
		}
	}
}
