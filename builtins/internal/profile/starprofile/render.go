package starprofile

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/benchbook/benchbook/builtins/internal/flame"
)

// The record's pieces, every string escaped: function names come from the
// target's binary, and a symbol may hold anything.

func esc(s string) string { return html.EscapeString(s) }

// htmlTable is a table of class class: a header row, then rows.
func htmlTable(class string, head []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString(`<table class="` + class + `"><tr>`)
	for _, h := range head {
		b.WriteString("<th>" + esc(h) + "</th>")
	}
	b.WriteString("</tr>")
	for _, row := range rows {
		b.WriteString("<tr>")
		for i, c := range row {
			if i == 0 {
				b.WriteString("<td><code>" + esc(c) + "</code></td>")
			} else {
				b.WriteString("<td>" + esc(c) + "</td>")
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

// mdTable is the same table in Markdown, the first column as code.
func mdTable(head []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat(" --- |", len(head)) + "\n")
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			if i == 0 {
				cells[i] = codeSpan(c)
			} else {
				cells[i] = mdEscape(c)
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// mdEscape backslash-escapes what Markdown or GitHub would read as markup.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range strings.Join(strings.Fields(s), " ") {
		if strings.ContainsRune("\\`*_[]<>|#!~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codeSpan is s as inline code, fenced by more backticks than it holds,
// with the table's pipes escaped.
func codeSpan(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	n, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			n = max(n, run)
		} else {
			run = 0
		}
	}
	ticks := strings.Repeat("`", n+1)
	return ticks + " " + strings.ReplaceAll(s, "|", `\|`) + " " + ticks
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

func numOrDash(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return flame.Num(x)
}

func signed(x float64) string {
	if x > 0 {
		return "+" + flame.Num(x)
	}
	return flame.Num(x)
}

// fileStem names a download after the targets ("postgres", "process_x").
func fileStem(targets []string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, strings.Join(targets, "+"))
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "profile"
	}
	return s
}

// sortBy orders xs by key, largest first, stably.
func sortBy[T any](xs []T, key func(T) float64) {
	slices.SortStableFunc(xs, func(a, b T) int { return cmp.Compare(key(b), key(a)) })
}
