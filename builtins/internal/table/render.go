package table

import (
	"fmt"
	"html"
	"math"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/fmtnum"
)

// maxShownRows bounds a table in the HTML and Markdown records; the full
// data stays in the CSV download and the JSON record.
const maxShownRows = 200

// cellText formats a value for display and says whether it is a number.
func cellText(v starlark.Value) (string, bool) {
	switch x := v.(type) {
	case starlark.NoneType:
		return "", false
	case starlark.String:
		return string(x), false
	case starlark.Int:
		return fmtnum.GroupDigits(x.String()), true
	case starlark.Float:
		return fmtnum.Float(float64(x)), true
	}
	return v.String(), false
}

func finiteFloat(f starlark.Float) (float64, bool) {
	x := float64(f)
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

// formatted is the table as display text with per-column alignment.
type formatted struct {
	cells   [][]string
	numeric []bool
	hidden  int // rows left out
}

func (t *Table) format() formatted {
	n := min(len(t.rows), maxShownRows)
	f := formatted{cells: make([][]string, n), numeric: make([]bool, len(t.columns)), hidden: len(t.rows) - n}
	seen := make([]bool, len(t.columns))
	for j := range f.numeric {
		f.numeric[j] = true
	}
	for i, r := range t.rows {
		if i < n {
			f.cells[i] = make([]string, len(r))
		}
		for j, v := range r {
			text, num := cellText(v)
			if i < n {
				f.cells[i][j] = text
			}
			if v != starlark.None {
				seen[j] = true
				f.numeric[j] = f.numeric[j] && num
			}
		}
	}
	for j := range f.numeric {
		f.numeric[j] = f.numeric[j] && seen[j]
	}
	return f
}

// HTML is a <table>, numbers right-aligned; long tables are cut.
func (t *Table) HTML() string {
	f := t.format()
	var b strings.Builder
	b.WriteString(`<table class="data"><thead><tr>`)
	for j, c := range t.columns {
		b.WriteString(`<th` + numClass(f.numeric[j]) + `>` + html.EscapeString(c) + `</th>`)
	}
	b.WriteString("</tr></thead><tbody>\n")
	for _, row := range f.cells {
		b.WriteString("<tr>")
		for j, s := range row {
			b.WriteString(`<td` + numClass(f.numeric[j]) + `>` + html.EscapeString(s) + `</td>`)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>")
	if f.hidden > 0 {
		fmt.Fprintf(&b, `<p class="more">… %d more rows: see the CSV</p>`, f.hidden)
	}
	return b.String()
}

func numClass(num bool) string {
	if num {
		return ` class="num"`
	}
	return ""
}

// Markdown is a GitHub table, numbers right-aligned.
func (t *Table) Markdown() string {
	f := t.format()
	var b strings.Builder
	b.WriteString("|")
	for _, c := range t.columns {
		b.WriteString(" " + mdCell(c) + " |")
	}
	b.WriteString("\n|")
	for j := range t.columns {
		if f.numeric[j] {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range f.cells {
		b.WriteString("|")
		for _, s := range row {
			b.WriteString(" " + mdCell(s) + " |")
		}
		b.WriteString("\n")
	}
	if f.hidden > 0 {
		fmt.Fprintf(&b, "\n… %d more rows\n", f.hidden)
	}
	return b.String()
}

// mdCell escapes text for one Markdown table cell.
func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "`", "\\`", "*", `\*`, "_", `\_`)
	return r.Replace(s)
}

// text is an aligned plain-text table.
func (t *Table) text() string {
	f := t.format()
	width := make([]int, len(t.columns))
	for j, c := range t.columns {
		width[j] = utf8.RuneCountInString(c)
	}
	for _, row := range f.cells {
		for j, s := range row {
			width[j] = max(width[j], utf8.RuneCountInString(s))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for j, s := range cells {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(s))
			if j > 0 {
				b.WriteString("  ")
			}
			if f.numeric[j] {
				b.WriteString(pad + s)
			} else if j < len(cells)-1 {
				b.WriteString(s + pad)
			} else {
				b.WriteString(s)
			}
		}
		b.WriteString("\n")
	}
	line(t.columns)
	rule := make([]string, len(t.columns))
	for j := range rule {
		rule[j] = strings.Repeat("-", width[j])
	}
	line(rule)
	for _, row := range f.cells {
		line(row)
	}
	if f.hidden > 0 {
		fmt.Fprintf(&b, "… %d more rows\n", f.hidden)
	}
	return strings.TrimRight(b.String(), "\n")
}
