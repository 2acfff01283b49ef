// Package property holds the state property test of issue 12, in a package
// of its own so that its minutes of PostgreSQL restarts get their own test
// timeout.
package property

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/statetest"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/pgtest"
)

// The state property test: a notebook with a cluster, a data cell and a
// measuring cell is edited at random (rows A -> B -> A, a settings restart
// cell added or removed, a DDL cell added, removed, changed or moved before
// or after the measurement, work_mem switched, a comment) and after every
// edit the incremental run's outputs must equal those of a fresh run from an
// empty cache. The oracle is benchbook on an empty cache whose cluster is a
// copy of a pristine initdb (initdb itself would cost seconds per step);
// notebooks that PostgreSQL cannot tell apart reuse the oracle's answer
// (see oracleKey).

type model struct {
	rows     int
	wm       string
	ddl      int  // 0: no DDL cell; 1..3: which one
	ddlFirst bool // the DDL cell comes before the measuring cell
	settings bool // a cell restarts the cluster with work_mem = wm
	comment  int
}

var ddls = map[int]string{
	1: `pg.exec("CREATE INDEX t_v ON t (v)")`,
	2: `pg.exec("ALTER TABLE t ADD COLUMN w int DEFAULT 7")`,
	3: `pg.exec("DELETE FROM t WHERE id %% 2 = 0")`,
}

func (m model) notebook() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %%%% params\nrows = param(\"rows\", 3)\nwm = param(\"wm\", \"4MB\")\n# edit %d\n\n", m.comment)
	b.WriteString("# %% cluster\npg = backend.postgres()\n\n")
	b.WriteString("# %% data\npg.exec(\"CREATE TABLE t (id int, v int)\")\npg.exec(\"INSERT INTO t SELECT i, i %% 3 FROM generate_series(1, %d) i\" % rows)\n\n")
	if m.settings {
		b.WriteString("# %% settings\npg.restart(settings = {\"work_mem\": wm})\n\n")
	}
	ddl := ""
	if m.ddl > 0 {
		ddl = "# %% ddl\n" + ddls[m.ddl] + "\n\n"
	}
	measure := `# %% measure
pg.query("""SELECT count(*) AS n, coalesce(sum(v), 0) AS s,
  (SELECT count(*) FROM pg_indexes WHERE tablename = 't') AS idx,
  (SELECT count(*) FROM information_schema.columns WHERE table_name = 't') AS cols,
  current_setting('work_mem') AS wm FROM t""").rows

`
	if m.ddlFirst {
		b.WriteString(ddl + measure)
	} else {
		b.WriteString(measure + ddl)
	}
	return b.String()
}

// oracleKey names what a fresh run of m shows. A comment changes nothing a
// fresh run shows, and neither does wm without the settings cell: no other
// cell reads it, so the cluster keeps its default work_mem whatever wm is.
// Reusing one fresh run's answer for such notebooks checks no less: were
// the answer to depend on an unread parameter after all, the incremental
// run would disagree with it and fail the test, as it should.
func (m model) oracleKey() string {
	m.comment = 0
	if !m.settings {
		m.wm = ""
	}
	if m.ddl == 0 {
		m.ddlFirst = false // the notebook is the same text
	}
	return fmt.Sprintf("%+v", m)
}

func (m model) params() map[string]string {
	return map[string]string{"rows": strconv.Itoa(m.rows), "wm": m.wm}
}

func (m model) edit(rng *rand.Rand) model {
	switch rng.Intn(7) {
	case 0, 1:
		m.rows = []int{3, 5}[rng.Intn(2)]
	case 2:
		m.wm = []string{"4MB", "8MB"}[rng.Intn(2)]
	case 3:
		m.ddl = rng.Intn(4)
	case 4:
		m.ddlFirst = !m.ddlFirst
	case 5:
		if rng.Intn(3) == 0 { // a restart costs two seconds: rarely
			m.settings = !m.settings
		}
	case 6:
		m.comment++
	}
	return m
}

// TestStateProperty runs the edits as two parallel chains, each with a
// random walk of its own (chain 0 is the first half of the walk this test
// made before it had chains), its notebook dir and its cache; they share
// one oracle and the pristine cluster every cache starts from. One chain
// of 100 steps took 255-380 s under -race on the 2-core VM, the longest
// package of the test command by far; two take 90 s at load 4-9 for as
// much work (19 restores, 95 cell executions, 20 fresh runs against 16,
// 98 and 17); four chains made 35 % more runs (each starts from an empty
// cache and walks more of the model space).
func TestStateProperty(t *testing.T) {
	needs.Postgres(t)
	steps := 100
	if testing.Short() {
		steps = 8
	}
	if v, err := strconv.Atoi(os.Getenv("BENCHBOOK_STATE_STEPS")); err == nil {
		steps = v
	}
	const chains = 2
	dir := t.TempDir()
	first := model{rows: 3, wm: "4MB"}
	statetest.RunNB(t, dir, filepath.Join(dir, "first"), first.notebook(), first.params(), true)
	pristine := pgtest.KeepPristine(t, filepath.Join(dir, "first"))
	pristineSum := treeSum(t, pristine.Dir)
	o := &oracle{answers: map[string]*answer{}, pristine: pristine}
	var tally struct {
		sync.Mutex
		mismatches, restores, executions int
	}
	t.Run("chains", func(t *testing.T) {
		for c := range chains {
			t.Run(fmt.Sprintf("chain%d", c), func(t *testing.T) {
				t.Parallel()
				mis, res, exe := runChain(t, int64(12+c), (steps+chains-1)/chains, pristine, o)
				tally.Lock()
				tally.mismatches, tally.restores, tally.executions = tally.mismatches+mis, tally.restores+res, tally.executions+exe
				tally.Unlock()
			})
		}
	})
	if sum := treeSum(t, pristine.Dir); sum != pristineSum {
		t.Errorf("the pristine cluster changed under the caches' hard links: every oracle answer after it is suspect")
	}
	t.Logf("%d steps in %d chains, %d mismatches; incremental runs: %d restores, %d cell executions; %d fresh runs",
		steps, chains, tally.mismatches, tally.restores, tally.executions, o.runs)
	fmt.Printf("state property: %d steps, %d mismatches, %d restores vs %d cell executions (%d fresh runs as the oracle)\n",
		steps, tally.mismatches, tally.restores, tally.executions, o.runs)
}

// runChain edits the model steps times from its first state, running the
// notebook incrementally on one cache after each edit and comparing its
// outputs with the oracle's.
func runChain(t *testing.T, seed int64, steps int, pristine pgtest.Pristine, o *oracle) (mismatches, restores, executions int) {
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	pristine.Seed(t, cache)
	m := model{rows: 3, wm: "4MB"}
	for step := 0; step < steps; step++ {
		if step > 0 {
			m = m.edit(rng)
		}
		src := m.notebook()
		got := statetest.RunNB(t, dir, cache, src, m.params(), true)
		if os.Getenv("BENCHBOOK_STATE_VERBOSE") != "" {
			fmt.Println(got.Stderr)
		}
		restores += strings.Count(got.Stderr, "↺")
		executions += strings.Count(got.Stderr, "▶ run")
		fresh := o.answer(t, dir, m)
		for cell, w := range fresh.outputs {
			if cell == "cluster" {
				continue // its output names the port
			}
			if g := got.Outputs[cell]; g != w {
				mismatches++
				t.Errorf("step %d %+v: cell %s shows %q, a fresh run %q\n%s\nthe incremental run:\n%s\nthe fresh run:\n%s", step, m, cell, g, w, src, got.Stderr, fresh.stderr)
			}
		}
	}
	return mismatches, restores, executions
}

// oracle is what a fresh run of each model shows: benchbook on an empty
// cache seeded with the pristine cluster, run once per oracleKey; chains
// that need the same answer wait for the one run making it.
type oracle struct {
	mu       sync.Mutex
	answers  map[string]*answer
	runs     int
	pristine pgtest.Pristine
}

type answer struct {
	done    chan struct{}
	outputs map[string]string
	stderr  string // its progress lines
}

func (o *oracle) answer(t *testing.T, dir string, m model) *answer {
	t.Helper()
	o.mu.Lock()
	a, ok := o.answers[m.oracleKey()]
	if !ok {
		a = &answer{done: make(chan struct{})}
		o.answers[m.oracleKey()] = a
		o.runs++
	}
	n := o.runs
	o.mu.Unlock()
	if ok {
		<-a.done
		if a.outputs == nil {
			t.Fatalf("the fresh run of %+v failed in another chain", m)
		}
		return a
	}
	defer close(a.done)
	fresh := filepath.Join(dir, fmt.Sprintf("fresh%d", n))
	o.pristine.Seed(t, fresh)
	r := statetest.RunNB(t, dir, fresh, m.notebook(), m.params(), true)
	a.outputs, a.stderr = r.Outputs, r.Stderr
	os.RemoveAll(fresh)
	return a
}

// treeSum hashes every file name and content under dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
