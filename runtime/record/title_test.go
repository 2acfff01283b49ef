package record

import "testing"

func TestWithoutTitleHeading(t *testing.T) {
	cells := []Cell{{Markdown: true, Source: "\n# Does X help?\nHypothesis: yes.\n"}, {Name: "a", Source: "# Does X help?\n"}}
	got := withoutTitleHeading(cells, "Does X help?")
	if got[0].Source != "Hypothesis: yes.\n" || got[1].Source != cells[1].Source {
		t.Errorf("sources after = %q, %q", got[0].Source, got[1].Source)
	}
	if cells[0].Source != "\n# Does X help?\nHypothesis: yes.\n" {
		t.Error("the caller's cells were modified")
	}
	for _, title := range []string{"Something else", ""} {
		if got := withoutTitleHeading(cells, title); got[0].Source != cells[0].Source {
			t.Errorf("title %q: heading removed", title)
		}
	}
	code := []Cell{{Name: "a", Source: "x = 1\n"}, {Markdown: true, Source: "# T\n"}}
	if got := withoutTitleHeading(code, "T"); got[1].Source != "# T\n" {
		t.Error("a heading after code was taken for the title")
	}
}
