package runtime

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// TestPostfixChainRefused: a 6 MB notebook holding a 2-million-link chain
// (x[0][0]..., x.a.a..., 1 + 1 + ...) is refused with the file, line,
// column and cell, like brackets nested too deep. Before, the chain
// parsed and the next walk of its tree died with "fatal error: stack
// overflow" (runtime.stringMask), taking the run and its record with it.
func TestPostfixChainRefused(t *testing.T) {
	for _, tc := range []struct{ name, expr, want string }{
		{"index", "x" + strings.Repeat("[0]", 2_000_000), "indexes, calls or attributes"},
		{"attribute", "x" + strings.Repeat(".a", 2_000_000), "indexes, calls or attributes"},
		{"call", "f" + strings.Repeat("()", 2_000_000), "indexes, calls or attributes"},
		{"operator", "1" + strings.Repeat("+1", 2_000_000), "operators chained"},
		{"and", "x" + strings.Repeat(" and x", 1_000_000), "operators chained"},
		{"inside brackets", "[(x" + strings.Repeat("[0]", 1001) + ")]", "indexes, calls or attributes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "# %% setup\nx = [0]\n\n# %% deep\ny = " + tc.expr + "\n"
			start := time.Now()
			_, err := Parse("nb.star", []byte(src))
			if err == nil || !strings.Contains(err.Error(), "excessive nesting") || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "nb.star:5:") || !strings.Contains(err.Error(), "(in cell deep)") {
				t.Fatalf("err = %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refusing took %v", d)
			}
		})
	}
}

// TestChainsWithinBoundRun: chains up to the bound, in every position the
// scanner must read past (strings holding brackets, comments, line joins,
// numbers with dots and exponents), parse and run; the deepest tree the
// bounds allow (70 nested levels, each a chain of 999 links and 999
// operators) is resolved and compiled within Go's stack.
func TestChainsWithinBoundRun(t *testing.T) {
	ok := []string{
		"x = [0]\ny = x" + strings.Repeat("[0]", 0) + strings.Repeat("[-1:][0:1]", 499) + "\n",
		"y = 0" + strings.Repeat(" + 1", maxChain) + "\n",
		"s = '[' + \"]]]\" + '''" + strings.Repeat("[0]", 2000) + "''' # " + strings.Repeat(".a", 2000) + "\n",
		"y = 1.5e+3 + 0x1e+1 + .5 + 1.\nz = (1 +\n  2)\nw = 1 + \\\n  2\n",
		"d = {'a': 1}\ne = d.get('a') + d.get('a')\nf = [i for i in range(3) if i and not i]\n",
	}
	for i, src := range ok {
		if err := checkChains("ok.star", 1, src); err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if _, err := starlark.ExecFileOptions(fileOptions, &starlark.Thread{}, "ok.star", src, nil); err != nil {
			t.Errorf("case %d does not run: %v", i, err)
		}
	}
	// The deepest: every level a chain of maxChain-1 links whose first
	// operand is the next level, as many levels as the parser's own bound
	// lets through (it counts its recursion, about 13 calls a bracket).
	inner := "0"
	for range 70 {
		inner = "[" + inner + "]" + strings.Repeat("[0]", maxChain-1) + strings.Repeat("+0", maxChain-1)
	}
	src := "y = " + inner + "\n"
	if err := checkChains("deep.star", 1, src); err != nil {
		t.Fatalf("deepest allowed: %v", err)
	}
	// It fails when run (an int is not indexable), after the walks that
	// recurse through it: resolving and compiling.
	_, err := starlark.ExecFileOptions(fileOptions, &starlark.Thread{}, "deep.star", src, nil)
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		t.Fatalf("deepest allowed: %v", err)
	}
}

// TestChainsPassEveryNotebook: no .star file of the repository (notebooks,
// stdlib, tests) trips the bound.
func TestChainsPassEveryNotebook(t *testing.T) {
	n := 0
	filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".star") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		n++
		if err := checkChains(path, 1, string(src)); err != nil {
			t.Errorf("%v", err)
		}
		return nil
	})
	if n < 20 {
		t.Errorf("only %d .star files found", n)
	}
}
