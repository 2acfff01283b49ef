package termmd

import (
	"strings"
	"testing"
)

// TestRender: the REPL printed raw Markdown (**...**, code
// fences, db\_cpu\_us\_per\_req) (issue 33).
func TestRender(t *testing.T) {
	src := "## Comparison\n\n**IMPROVES** by `12 %`, see [the record](nb.html).\n\n" +
		"| metric | A | B |\n| --- | ---: | ---: |\n| db\\_cpu\\_us\\_per\\_req | 412.5 | 98.25 |\n| rps | 1,963 | 11,724 |\n\n" +
		"```\nSeq Scan on t\n```\n\n- one\n- two *x*\n"
	got := Render(src, false)
	want := "Comparison\n" +
		"----------\n\n" +
		"IMPROVES by 12 %, see the record (nb.html).\n\n" +
		"metric                 A       B\n" +
		"─────────────────  ─────  ──────\n" +
		"db_cpu_us_per_req  412.5   98.25\n" +
		"rps                1,963  11,724\n\n" +
		"    Seq Scan on t\n\n" +
		"• one\n" +
		"• two x\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, raw := range []string{"**", "```", `\_`, "|"} {
		if strings.Contains(got, raw) {
			t.Errorf("markup %q left in:\n%s", raw, got)
		}
	}
	if c := Render("**b** `c`", true); c != "\x1b[1mb\x1b[0m \x1b[36mc\x1b[0m\n" {
		t.Errorf("with colour: %q", c)
	}
}
