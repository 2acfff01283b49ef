package runtime

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The cache soundness test: a notebook is edited at random (a cell's code,
// a parameter, an input file, cell order, a comment) and after every edit
//   - the outputs of an incremental run equal those of a run on an empty
//     cache, and
//   - exactly the cells that must rerun did: those whose code, parameter,
//     file input or read values differ from every earlier execution (an
//     entry keeps a variant per set of file inputs).
// The oracle for "must rerun" is computed by the test from its own model of
// the notebook, not from the engine.

type modelCell struct {
	name    string
	reads   []int // indexes of earlier cells whose value it reads
	k       int   // a constant in its code
	usesP   bool  // reads param("p", 1)
	usesF   bool  // reads file("in.txt")
	comment string
}

// code is the cell's meaning; the comment is not part of it.
func (m modelCell) code(cells []modelCell) string {
	expr := fmt.Sprintf("%d", m.k)
	for _, r := range m.reads {
		expr += fmt.Sprintf(" + v_%s", cells[r].name)
	}
	if m.usesP {
		expr += ` + param("p", 1)`
	}
	if m.usesF {
		expr += ` + len(file("in.txt"))`
	}
	return fmt.Sprintf("v_%s = (%s) %% 3\nv_%s\n", m.name, expr, m.name)
}

func renderModel(cells []modelCell, order []int) string {
	var b strings.Builder
	b.WriteString("# %% [markdown]\n# # Random notebook\n\n")
	for _, i := range order {
		c := cells[i]
		fmt.Fprintf(&b, "# %%%% %s\n", c.name)
		if c.comment != "" {
			fmt.Fprintf(&b, "# %s\n", c.comment)
		}
		b.WriteString(c.code(cells))
		b.WriteString("\n")
	}
	return b.String()
}

func TestCacheSoundnessRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const n = 7
	cells := make([]modelCell, n)
	for i := range cells {
		cells[i] = modelCell{name: fmt.Sprintf("c%d", i), k: rng.Intn(5), usesP: rng.Intn(4) == 0, usesF: rng.Intn(4) == 0}
		for j := 0; j < i; j++ {
			if rng.Intn(3) == 0 {
				cells[i].reads = append(cells[i].reads, j)
			}
		}
	}
	order := rng.Perm(n) // file order need not follow dependencies
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	os.WriteFile(input, []byte("ab"), 0o644)
	params := map[string]string{}
	seen := map[string]bool{} // executions so far: meaning + read values + params + file

	for step := 0; step < 40; step++ {
		edit := rng.Intn(5)
		switch edit {
		case 0: // code
			i := rng.Intn(n)
			cells[i].k = rng.Intn(5)
		case 1: // parameter
			params["p"] = fmt.Sprint(rng.Intn(3))
		case 2: // input file
			os.WriteFile(input, []byte(strings.Repeat("x", rng.Intn(4))), 0o644)
		case 3: // cell order
			order = rng.Perm(n)
		case 4: // comment
			cells[rng.Intn(n)].comment = fmt.Sprintf("note %d", rng.Intn(100))
		}
		src := renderModel(cells, order)
		freshDir := t.TempDir()
		os.WriteFile(filepath.Join(freshDir, "in.txt"), mustRead(t, input), 0o644)
		fresh := runNotebook(t, freshDir, src, Options{Params: params})
		inc := runNotebook(t, dir, src, Options{Params: params})

		var wantRan, gotRan []string
		content := string(mustRead(t, input))
		for _, c := range cells {
			sig := c.code(cells) + "|reads"
			for _, r := range c.reads {
				sig += "," + fresh.outputs[cells[r].name]
			}
			if c.usesP {
				// p at its default, 1, is p unset (paramdefault.go).
				p, ok := params["p"]
				if !ok {
					p = "1"
				}
				sig += "|p=" + p
			}
			if c.usesF {
				sig += "|file=" + content
			}
			if !seen[sig] {
				wantRan = append(wantRan, c.name)
				seen[sig] = true
			}
			if inc.e.CellRun(c.name).Executed {
				gotRan = append(gotRan, c.name)
			}
			if inc.outputs[c.name] != fresh.outputs[c.name] {
				t.Fatalf("step %d (edit %d): cell %s shows %q, a fresh run shows %q", step, edit, c.name, inc.outputs[c.name], fresh.outputs[c.name])
			}
		}
		sort.Strings(wantRan)
		sort.Strings(gotRan)
		if strings.Join(wantRan, ",") != strings.Join(gotRan, ",") {
			t.Fatalf("step %d (edit %d): ran %v, want %v\n%s", step, edit, gotRan, wantRan, inc.stderr.String())
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
