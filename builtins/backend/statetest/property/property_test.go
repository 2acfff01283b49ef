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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/statetest"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
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

func TestStateProperty(t *testing.T) {
	needs.Postgres(t)
	steps := 100
	if testing.Short() {
		steps = 8
	}
	if v, err := strconv.Atoi(os.Getenv("BENCHBOOK_STATE_STEPS")); err == nil {
		steps = v
	}
	rng := rand.New(rand.NewSource(12))
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	m := model{rows: 3, wm: "4MB"}
	oracle := map[string]map[string]string{}
	var pristine string // a resource dir holding only a fresh cluster and its initial snapshot
	var pristineSum string
	mismatches, restores, executions, oracleRuns := 0, 0, 0, 0
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
		if pristine == "" {
			pristine = keepPristine(t, dir, cache)
			pristineSum = treeSum(t, filepath.Join(pristine, "states"))
		}
		id := m.oracleKey()
		want, ok := oracle[id]
		if !ok {
			fresh := filepath.Join(dir, fmt.Sprintf("fresh%d", step))
			seed(t, pristine, cache, fresh)
			want = statetest.RunNB(t, dir, fresh, src, m.params(), true).Outputs
			os.RemoveAll(fresh)
			oracle[id] = want
			oracleRuns++
		}
		for cell, w := range want {
			if cell == "cluster" {
				continue // its output names the port
			}
			if g := got.Outputs[cell]; g != w {
				mismatches++
				t.Errorf("step %d %+v: cell %s shows %q, a fresh run %q\n%s\n%s", step, m, cell, g, w, src, got.Stderr)
			}
		}
	}
	if sum := treeSum(t, filepath.Join(pristine, "states")); sum != pristineSum {
		t.Errorf("the pristine snapshot changed under the fresh runs' hard links: every oracle answer after it is suspect")
	}
	t.Logf("%d steps, %d mismatches; incremental runs: %d restores, %d cell executions; %d fresh runs", steps, mismatches, restores, executions, oracleRuns)
	fmt.Printf("state property: %d steps, %d mismatches, %d restores vs %d cell executions (%d fresh runs as the oracle)\n", steps, mismatches, restores, executions, oracleRuns)
}

// keepPristine copies the cluster's resource dir as the first run left it,
// keeping only what a fresh cluster has: its data from the initial snapshot
// and its generation file.
func keepPristine(t *testing.T, dir, cache string) string {
	t.Helper()
	roots, _ := filepath.Glob(filepath.Join(cache, "resources", "cluster-*", "postgres"))
	if len(roots) != 1 {
		t.Fatalf("want one cluster resource dir, got %v", roots)
	}
	root := roots[0]
	initial, _ := filepath.Glob(filepath.Join(root, "states", "pg-*"))
	if len(initial) != 1 {
		t.Fatalf("want one initial snapshot, got %v", initial)
	}
	p := filepath.Join(dir, "pristine", filepath.Base(filepath.Dir(root)), "postgres")
	os.MkdirAll(filepath.Join(p, "states"), 0o755)
	cp(t, initial[0], filepath.Join(p, "data"))
	cp(t, initial[0], filepath.Join(p, "states", filepath.Base(initial[0])))
	cp(t, filepath.Join(root, "generation"), filepath.Join(p, "generation"))
	return p
}

// seed gives an empty cache the pristine cluster, where its first run's
// initdb would have put one. The data dir is copied (PostgreSQL writes to
// it); the initial snapshot is hard-linked, half the bytes of every fresh
// run: benchbook only reads a snapshot (a restore copies it out, and a new
// snapshot of the same name replaces its files rather than writing into
// them), so the pristine copy stays pristine.
func seed(t *testing.T, pristine, cache, fresh string) {
	t.Helper()
	owner := filepath.Base(filepath.Dir(pristine))
	to := filepath.Join(fresh, "resources", owner, "postgres")
	os.MkdirAll(to, 0o755)
	cp(t, filepath.Join(pristine, "data"), filepath.Join(to, "data"))
	cp(t, filepath.Join(pristine, "generation"), filepath.Join(to, "generation"))
	cp(t, filepath.Join(pristine, "states"), filepath.Join(to, "states"), "-l")
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

// cp copies with cp -a, plus flags (-l: hard links instead of copies).
func cp(t *testing.T, from, to string, flags ...string) {
	t.Helper()
	args := append([]string{"-a"}, flags...)
	if out, err := exec.Command("cp", append(args, from, to)...).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v %s", from, err, out)
	}
}
