package property

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/statetest"
)

// The inputs walk (issue 47): a notebook whose cells depend on what the key
// does not see in their source, edited at random, one input a step: a
// module's top-level param() (directly and through a module it loads) and
// file(), the PATH that finds the program workload.exec runs and that
// program's content, the SQLite file the cells count (replaced outside
// benchbook, or left as the last run's cells left it; the cell counting it
// edited, so that it runs on the state the cells left), and the binary of
// a target process whose answers abab checkpoints. After every step the
// incremental run on one cache must show, cell by cell, what a fresh run
// on an empty cache shows, in a directory holding the model's files.

const inputsNB = `# %% a
load("lib.star", "N", "DATA", "M")
a = [N, DATA, M]
a

# %% b
load("lib.star", "N", "DATA")
b = [N, len(DATA)]
b

# %% c
load("lib2.star", "M")
c = M * 10
c

# %% rel
r = workload.exec(["relbench"], runs = 1, warmup = 0)
rel = sorted(r.errors.keys())
rel

# %% db
db = backend.sqlite("data.db")

# %% add
db.exec("INSERT INTO t VALUES (1)")

# %% count
db.query("SELECT count(*) AS n, sum(id) AS s FROM t%s")[0]

# %% server
srv = backend.process(["./srvbin"], cwd = ".", ready = "log:^version")

# %% runs
load("@std/abab.star", "abab")
exp = abab(arms = {"A": None, "B": None}, pairs = 2, run = lambda arm: srv.logs(tail = 1))
[exp.runs[x][p] for p in range(2) for x in ["A", "B"]]
`

// inputsModel is what the notebook's inputs hold.
type inputsModel struct {
	n, m     string // -p n, -p m; "" for the default
	data     string // data.txt, which lib.star reads at its top level
	first    int    // which bin dir PATH searches first (0, 1)
	rel      [2]int // the exit code of each bin dir's relbench
	rows     int    // rows of the SQLite file as the user gave it
	replaced bool   // this step wrote it anew (else: as the last run left it)
	srv      int    // the version srvbin says
	where    bool   // the count cell's query has a WHERE clause (its source edited)
}

// notebook is the notebook's text.
func (m inputsModel) notebook() string {
	where := ""
	if m.where {
		where = " WHERE id > 0"
	}
	return strings.Replace(inputsNB, "FROM t%s", "FROM t"+where, 1)
}

func (m inputsModel) params() map[string]string {
	p := map[string]string{}
	if m.n != "" {
		p["n"] = m.n
	}
	if m.m != "" {
		p["m"] = m.m
	}
	return p
}

// edits is how many kinds of edit edit knows.
const edits = 9

// edit changes one input, of the given kind, and says which.
func (m inputsModel) edit(rng *rand.Rand, kind int) (inputsModel, string) {
	m.replaced = false
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	switch kind {
	case 0:
		m.n = pick("", "2", "3")
		return m, "-p n=" + m.n
	case 1:
		m.m = pick("", "4", "5")
		return m, "-p m=" + m.m
	case 2:
		m.data = pick("x", "yy", "zzz")
		return m, "data.txt: " + m.data
	case 3:
		m.first = 1 - m.first
		return m, fmt.Sprintf("PATH: bin%d first", m.first)
	case 4:
		d := rng.Intn(2)
		m.rel[d] = 3 + rng.Intn(3)
		return m, fmt.Sprintf("relbench: bin%d's exits %d", d, m.rel[d])
	case 5:
		m.rows, m.replaced = []int{3, 5, 9}[rng.Intn(3)], true
		return m, fmt.Sprintf("data.db: replaced outside benchbook, %d rows", m.rows)
	case 6:
		m.srv = 1 + (m.srv+rng.Intn(2))%3 // another version
		return m, fmt.Sprintf("srvbin: says version %d", m.srv)
	case 7:
		// The cell runs on the state add left, whatever file the user gave.
		m.where = !m.where
		return m, fmt.Sprintf("count: WHERE clause %v", m.where)
	}
	return m, "nothing: the files as the last run left them"
}

// writeInputs puts the model's files in dir; the SQLite file only when
// it is given anew (a fresh dir, or replaced this step).
func (m inputsModel) writeInputs(t *testing.T, dir string, sqliteToo bool) {
	t.Helper()
	files := map[string]string{
		"lib.star":  "load(\"lib2.star\", _M = \"M\")\nM = _M\nN = param(\"n\", 1)\nDATA = file(\"data.txt\")\n",
		"lib2.star": "M = param(\"m\", 1)\n",
		"data.txt":  m.data,
		"srvbin":    fmt.Sprintf("#!/bin/sh\necho version %d\nexec sleep 600\n", m.srv),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if sqliteToo {
		statetest.WriteSQLite(t, filepath.Join(dir, "data.db"), m.rows)
	}
}

// writeBins writes bins/bin0/relbench and bins/bin1/relbench and returns
// the PATH that searches bin first, then the other, then the test's own.
func (m inputsModel) writeBins(t *testing.T, bins string) string {
	t.Helper()
	for d, code := range m.rel {
		dir := filepath.Join(bins, fmt.Sprintf("bin%d", d))
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "relbench"), []byte(fmt.Sprintf("#!/bin/sh\nexit %d\n", code)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sep := string(os.PathListSeparator)
	return filepath.Join(bins, fmt.Sprintf("bin%d", m.first)) + sep + filepath.Join(bins, fmt.Sprintf("bin%d", 1-m.first)) + sep + basePath
}

// basePath is PATH as the test started.
var basePath = os.Getenv("PATH")

// TestInputsProperty walks BENCHBOOK_INPUT_STEPS steps (10 by default,
// 6 s on the 2-core VM; bench/state/inputs.sh runs the long form). The
// first edits make each kind once, in a random order; then the kinds are
// drawn at random. BENCHBOOK_INPUT_SEED changes the walk.
func TestInputsProperty(t *testing.T) {
	steps, seed := 10, int64(47)
	if v, err := strconv.Atoi(os.Getenv("BENCHBOOK_INPUT_STEPS")); err == nil {
		steps = v
	}
	if v, err := strconv.ParseInt(os.Getenv("BENCHBOOK_INPUT_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewSource(seed))
	tour := rng.Perm(edits)
	warm, bins := t.TempDir(), t.TempDir()
	cache := filepath.Join(warm, "cache")
	m := inputsModel{data: "x", rel: [2]int{3, 4}, rows: 3, replaced: true, srv: 1}
	var stale, compared, hits int
	counts := map[string]int{}
	for step := 0; step < steps; step++ {
		what := "first: an empty cache"
		if step > 0 {
			kind := rng.Intn(edits)
			if step <= edits {
				kind = tour[step-1]
			}
			m, what = m.edit(rng, kind)
		}
		counts[strings.TrimSuffix(strings.Fields(what)[0], ":")]++
		t.Setenv("PATH", m.writeBins(t, bins))
		m.writeInputs(t, warm, m.replaced)
		fresh := t.TempDir()
		m.writeInputs(t, fresh, true)
		want := statetest.RunNB(t, fresh, filepath.Join(fresh, "cache"), m.notebook(), m.params(), true)
		got := statetest.RunNB(t, warm, cache, m.notebook(), m.params(), true)
		os.RemoveAll(fresh)
		for _, cell := range []string{"a", "b", "c", "rel", "add", "count", "runs"} {
			if strings.HasPrefix(want.Outputs[cell], "error") || want.Status[cell] != "ran" {
				t.Fatalf("step %d (%s): the fresh run's %s: %s %s\n%s", step, what, cell, want.Status[cell], want.Outputs[cell], want.Stderr)
			}
			compared++
			if got.Status[cell] == "hit" {
				hits++
			}
			if got.Outputs[cell] != want.Outputs[cell] {
				stale++
				t.Errorf("step %d (%s): cell %s shows %q (%s: %s), a fresh run %q", step, what, cell, got.Outputs[cell], got.Status[cell], got.Why[cell], want.Outputs[cell])
			}
		}
	}
	t.Logf("inputs walk: %d steps (%v), %d cell comparisons, %d stale, %d of them hits", steps, counts, compared, stale, hits)
	fmt.Printf("inputs walk: %d steps, %d cell comparisons, %d stale, %d cache hits\n", steps, compared, stale, hits)
}
