// Package engine benchmarks benchbook's notebook engine on a fully cached
// rerun. The notebook has 30 cells and 10 tables.
package engine

import (
	"fmt"
	"strings"
)

// Notebook returns a notebook of n code cells, every third one displaying
// a table of rows rows, each cell reading its predecessor.
func Notebook(n, rows int) string {
	var b strings.Builder
	b.WriteString("# %% [markdown]\n# # Engine benchmark\n# A chain of cells; every third shows a table.\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "# %%%% c%02d\n", i)
		prev := "0"
		if i > 0 {
			prev = fmt.Sprintf("v%02d", i-1)
		}
		if i%3 == 0 {
			fmt.Fprintf(&b, "v%02d = %s + 1\ntable([{\"run\": r, \"rps\": r * 1.5 + v%02d, \"p99_ms\": r / 7.0} for r in range(%d)])\n\n", i, prev, i, rows)
		} else {
			fmt.Fprintf(&b, "v%02d = %s + %d\nv%02d\n\n", i, prev, i, i)
		}
	}
	return b.String()
}
