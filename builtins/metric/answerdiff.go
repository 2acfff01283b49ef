package metric

import (
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/table"
)

// Where two answers differ. Printing both answers cut to 80 characters
// hid the difference whenever it lay past the cut (two 40-row query
// answers showed the same header and first row): describe instead where
// the answers first part, and show the values there.

// maxShown bounds each value shown beside a difference.
const maxShown = 80

// difference describes how b differs from a (which are not equal).
func difference(a, b starlark.Value) string {
	if d, ok := a.(differ); ok {
		return d.Difference(b)
	}
	if short(a) == a.String() && short(b) == b.String() && !isTable(a) {
		return fmt.Sprintf("a = %s, b = %s", a, b)
	}
	return where(a, b, 0)
}

func isTable(v starlark.Value) bool { _, ok := v.(*table.Table); return ok }

// differ is an answer that says itself where it differs from another (an
// HTTP response: its status, a header, or where in its body).
type differ interface {
	Difference(b starlark.Value) string
}

// where descends into tables, lists, tuples, dicts and strings to the
// first difference; depth bounds the descent into nested answers.
func where(a, b starlark.Value, depth int) string {
	if depth < 8 {
		switch x := a.(type) {
		case *table.Table:
			if y, ok := b.(*table.Table); ok {
				return tableDiff(x, y, depth)
			}
		case *starlark.List, starlark.Tuple:
			if seqB, ok := b.(starlark.Indexable); ok && sameKind(a, b) {
				return seqDiff(a.(starlark.Indexable), seqB, depth)
			}
		case *starlark.Dict:
			if y, ok := b.(*starlark.Dict); ok {
				return dictDiff(x, y, depth)
			}
		case starlark.String:
			if y, ok := b.(starlark.String); ok && (short(a) != a.String() || short(b) != b.String()) {
				return stringDiff(string(x), string(y))
			}
		}
	}
	return fmt.Sprintf("a = %s, b = %s", short(a), short(b))
}

func sameKind(a, b starlark.Value) bool { return a.Type() == b.Type() }

// at prefixes a nested difference with its place.
func at(place, inner string) string {
	if strings.HasPrefix(inner, "first differ at ") {
		return "first differ at " + place + ", " + strings.TrimPrefix(inner, "first differ at ")
	}
	if strings.HasPrefix(inner, "a = ") {
		return "first differ at " + place + ": " + inner
	}
	return "at " + place + ": " + inner
}

func tableDiff(a, b *table.Table, depth int) string {
	ca, cb := a.Columns(), b.Columns()
	if !slices.Equal(ca, cb) {
		return fmt.Sprintf("columns differ: a has %s; b has %s", strings.Join(ca, ", "), strings.Join(cb, ", "))
	}
	ra, rb := a.Rows(), b.Rows()
	n := min(len(ra), len(rb))
	for i := range n {
		for j, v := range ra[i] {
			if eq, err := starlark.Equal(v, rb[i][j]); err == nil && !eq {
				if len(ra) == len(rb) && sameRows(ra, rb) {
					return fmt.Sprintf("the same %d rows in another order (first out of place: row %d)", len(ra), i)
				}
				return at(fmt.Sprintf("row %d, column %q", i, ca[j]), where(v, rb[i][j], depth+1))
			}
		}
	}
	return fmt.Sprintf("a has %d rows, b has %d (the first %d are equal)", len(ra), len(rb), n)
}

// sameRows reports whether b's rows are a's in another order, by their
// printed form (a sort, not a quadratic search: answers can be long).
func sameRows(a, b [][]starlark.Value) bool {
	key := func(rows [][]starlark.Value) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = starlark.Tuple(r).String()
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

func seqDiff(a, b starlark.Indexable, depth int) string {
	n := min(a.Len(), b.Len())
	for i := range n {
		if eq, err := starlark.Equal(a.Index(i), b.Index(i)); err == nil && !eq {
			return at(fmt.Sprintf("[%d]", i), where(a.Index(i), b.Index(i), depth+1))
		}
	}
	return fmt.Sprintf("a has %d elements, b has %d (the first %d are equal)", a.Len(), b.Len(), n)
}

func dictDiff(a, b *starlark.Dict, depth int) string {
	for _, kv := range a.Items() {
		w, found, _ := b.Get(kv[0])
		if !found {
			return fmt.Sprintf("key %s is in a only", short(kv[0]))
		}
		if eq, err := starlark.Equal(kv[1], w); err == nil && !eq {
			return at(fmt.Sprintf("[%s]", short(kv[0])), where(kv[1], w, depth+1))
		}
	}
	for _, kv := range b.Items() {
		if _, found, _ := a.Get(kv[0]); !found {
			return fmt.Sprintf("key %s is in b only", short(kv[0]))
		}
	}
	return fmt.Sprintf("a = %s, b = %s", short(a), short(b))
}

// stringDiff shows a window of each string around the first character
// where they part.
func stringDiff(a, b string) string {
	ra, rb := []rune(a), []rune(b)
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	return fmt.Sprintf("first differ at character %d: a = %s, b = %s", i, window(ra, i), window(rb, i))
}

// window quotes up to 10 characters before i and 10 from it, marking cuts.
func window(r []rune, i int) string {
	lo, hi := max(0, i-10), min(len(r), i+11)
	s := starlark.String(string(r[lo:hi])).String()
	if lo > 0 {
		s = `"…` + s[1:]
	}
	if hi < len(r) {
		s = s[:len(s)-1] + `…"`
	}
	return s
}
