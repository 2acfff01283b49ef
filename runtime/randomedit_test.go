package runtime

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The warm-cache property: a notebook is edited at random, and after every
// edit a run on the cache of all earlier runs must show exactly what a run
// on an EMPTY cache shows, cell by cell (outputs and error or not). The
// oracle shares no state with the cache under test, so it cannot share its
// bugs. The edits are those a user makes: constants, renames of globals and
// cells, cell order, comments and blank lines, whitespace inside string
// literals, the files read by live and memo cells, and parameters.
//
// BENCHBOOK_EDITS=N runs N edits instead of 200 (bench/engine/soundness.sh).

// editCell is one cell of the generated notebook.
type editCell struct {
	kind    string // "value", "text", "live", "memo", "use"
	label   string // the cell's name in the file (renamed at times)
	global  string // the global it defines (renamed at times)
	k       int    // a constant in its code
	reads   []int  // earlier value cells whose global it reads
	param   bool   // reads param("p", 1)
	lines   []string
	comment string // a comment line above the code, or ""
	inline  bool   // a trailing comment on the first code line
	blank   bool   // a blank line inside the code
}

type editNotebook struct {
	cells []editCell
	order []int // file order, a permutation
}

// code is the cell's source. "use" cells read the live cell's function.
func (nb *editNotebook) code(i int) string {
	c := nb.cells[i]
	var b strings.Builder
	if c.comment != "" {
		fmt.Fprintf(&b, "# %s\n", c.comment)
	}
	inline := ""
	if c.inline {
		inline = "  # note: \"quoted\" and # hashed"
	}
	sum := strconv.Itoa(c.k)
	for _, r := range c.reads {
		sum += " + " + nb.cells[r].global
	}
	if c.param {
		sum += ` + param("p", 1)`
	}
	switch c.kind {
	case "value":
		fmt.Fprintf(&b, "%s = (%s) %% 7%s\n", c.global, sum, inline)
	case "text":
		fmt.Fprintf(&b, "%s = \"\"\"%s\"\"\"%s\n", c.global, strings.Join(c.lines, "\n"), inline)
	case "live":
		fmt.Fprintf(&b, "_factor = len(file(\"live.txt\"))%s\n", inline)
		fmt.Fprintf(&b, "def %s(x):\n    return x * _factor + %d\n", c.global, c.k)
	case "memo":
		fmt.Fprintf(&b, "_before = len(file(\"memo.txt\"))%s\n", inline)
		fmt.Fprintf(&b, "def _%s():\n    print(\"inside\", _before)\n    return _before * 10 + len(file(\"in.txt\")) + %s\n", c.global, sum)
		fmt.Fprintf(&b, "%s = memo(\"m\", _%s)\n", c.global, c.global)
	case "use":
		fmt.Fprintf(&b, "%s = %s(%s)%s\n", c.global, nb.live(), sum, inline)
	}
	if c.blank {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "print(%q, %s)\n%s\n", c.label, c.global, c.global)
	return b.String()
}

func (nb *editNotebook) live() string {
	for _, c := range nb.cells {
		if c.kind == "live" {
			return c.global
		}
	}
	panic("no live cell")
}

func (nb *editNotebook) source() string {
	var b strings.Builder
	b.WriteString("# %% [markdown]\n# # Edited at random\n\n")
	for _, i := range nb.order {
		fmt.Fprintf(&b, "# %%%% %s\n%s\n", nb.cells[i].label, nb.code(i))
	}
	return b.String()
}

func newEditNotebook(rng *rand.Rand) *editNotebook {
	kinds := []string{"value", "value", "text", "live", "value", "memo", "use", "value"}
	nb := &editNotebook{}
	var values []int
	for i, kind := range kinds {
		c := editCell{kind: kind, label: fmt.Sprintf("c%d", i), global: fmt.Sprintf("g%d", i), k: rng.Intn(5), param: rng.Intn(4) == 0}
		if kind == "text" {
			c.lines = []string{"alpha", "beta"}
		}
		if kind != "text" && kind != "live" {
			for _, v := range values {
				if rng.Intn(3) == 0 {
					c.reads = append(c.reads, v)
				}
			}
		}
		if kind == "value" {
			values = append(values, i)
		}
		nb.cells = append(nb.cells, c)
	}
	nb.order = rng.Perm(len(kinds))
	return nb
}

// edit changes the notebook or its files at random and says what it did.
func (nb *editNotebook) edit(rng *rand.Rand, dir string, params map[string]string) string {
	i := rng.Intn(len(nb.cells))
	c := &nb.cells[i]
	switch rng.Intn(10) {
	case 0:
		c.k = rng.Intn(5)
		return fmt.Sprintf("constant of %s = %d", c.label, c.k)
	case 1:
		c.global = fmt.Sprintf("g%d_%d", i, rng.Intn(1000))
		return "rename global of " + c.label + " to " + c.global
	case 2:
		c.label = fmt.Sprintf("c%d_%d", i, rng.Intn(1000))
		return "rename cell to " + c.label
	case 3:
		a, b := rng.Intn(len(nb.order)), rng.Intn(len(nb.order))
		nb.order[a], nb.order[b] = nb.order[b], nb.order[a]
		return "swap cells"
	case 4:
		switch rng.Intn(3) {
		case 0:
			c.comment = fmt.Sprintf("note %d with \"\"\" quotes", rng.Intn(100))
		case 1:
			c.inline = !c.inline
		default:
			c.blank = !c.blank
		}
		return "comment or blank line in " + c.label
	case 5:
		t := &nb.cells[2] // the text cell
		pieces := []string{"", "  ", "# not a comment", "gamma", " "}
		j := rng.Intn(len(t.lines) + 1)
		t.lines = append(t.lines[:j], append([]string{pieces[rng.Intn(len(pieces))]}, t.lines[j:]...)...)
		if len(t.lines) > 6 {
			t.lines = t.lines[2:]
		}
		return fmt.Sprintf("whitespace inside the string: %q", t.lines)
	case 6:
		return "live.txt = " + writeRandom(rng, filepath.Join(dir, "live.txt"))
	case 7:
		return "memo.txt = " + writeRandom(rng, filepath.Join(dir, "memo.txt"))
	case 8:
		return "in.txt = " + writeRandom(rng, filepath.Join(dir, "in.txt"))
	default:
		if v := rng.Intn(4); v == 3 {
			delete(params, "p")
		} else {
			params["p"] = strconv.Itoa(v)
		}
		return fmt.Sprintf("params %v", params)
	}
}

func writeRandom(rng *rand.Rand, path string) string {
	s := strings.Repeat("x", rng.Intn(4))
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		panic(err)
	}
	return strconv.Quote(s)
}

func TestWarmCacheEqualsEmptyCache(t *testing.T) {
	edits := 200
	if n, err := strconv.Atoi(os.Getenv("BENCHBOOK_EDITS")); err == nil {
		edits = n
	}
	rng := rand.New(rand.NewSource(14))
	nb := newEditNotebook(rng)
	warm := t.TempDir()
	for _, f := range []string{"live.txt", "memo.txt", "in.txt"} {
		writeRandom(rng, filepath.Join(warm, f))
	}
	params := map[string]string{}
	hits, compared := 0, 0
	for step := 0; step < edits; step++ {
		what := nb.edit(rng, warm, params)
		src := nb.source()
		cold := t.TempDir()
		for _, f := range []string{"live.txt", "memo.txt", "in.txt"} {
			os.WriteFile(filepath.Join(cold, f), mustRead(t, filepath.Join(warm, f)), 0o644)
		}
		want := runNotebook(t, cold, src, Options{Params: params})
		got := runNotebook(t, warm, src, Options{Params: params})
		for _, c := range nb.cells {
			compared++
			if got.status(c.label) == StatusHit {
				hits++
			}
			if got.outputs[c.label] != want.outputs[c.label] || (got.status(c.label) == StatusError) != (want.status(c.label) == StatusError) {
				t.Fatalf("edit %d (%s): cell %s shows %q (%s, %s) on the warm cache, %q (%s) on an empty one\n%s\n%s",
					step, what, c.label, got.outputs[c.label], got.status(c.label), got.e.CellRun(c.label).Why,
					want.outputs[c.label], want.status(c.label), src, got.stderr.String())
			}
			if want.status(c.label) == StatusError {
				t.Fatalf("edit %d: the generated notebook fails in %s: %v\n%s", step, c.label, want.e.CellRun(c.label).Err, src)
			}
		}
	}
	t.Logf("%d edits, %d cell comparisons, 0 differences; %d of them cache hits", edits, compared, hits)
}
