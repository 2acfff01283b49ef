package statetest

import (
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// holdsNB: settle runs a statement through exec (which benchbook counts as
// a change) that changes nothing; peek reads the table.
const holdsNB = `# %% cluster
pg = backend.postgres()

# %% data
pg.exec("CREATE TABLE t (id int PRIMARY KEY)")
pg.exec("INSERT INTO t SELECT generate_series(1, 500)")
pg.exec("CHECKPOINT")

# %% settle
pg.exec("SET work_mem = '8MB'")

# %% peek
n = pg.query("SELECT count(*) AS n FROM t")[0]["n"]
n
`

// TestNoRestoreOfTheStateAlreadyHeld: a cell right after data restored the
// state the cluster was already in (issue 33: 1.0 s for nothing). Here
// settle leaves a new state identity over the same data; when settle is
// edited it must enter data's state, which the cluster already holds:
// the restore is skipped and said so, and a real change is still restored.
func TestNoRestoreOfTheStateAlreadyHeld(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	cache := dir + "/cache"
	RunNB(t, dir, cache, holdsNB, nil, true)
	edited := strings.Replace(holdsNB, "'8MB'", "'16MB'", 1)
	r := RunNB(t, dir, cache, edited, nil, true)
	if r.Status["settle"] != "ran" || r.Outputs["peek"] != "500" {
		t.Fatalf("settle %s, peek %q\n%s", r.Status["settle"], r.Outputs["peek"], r.Stderr)
	}
	if strings.Contains(r.Stderr, "restored from its snapshot") {
		t.Errorf("the cluster held the state settle needs, yet it was restored:\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "already holds state") {
		t.Errorf("the skipped restore is not said:\n%s", r.Stderr)
	}
	// A real change between two runs is restored as before.
	changed := strings.Replace(holdsNB, "SET work_mem = '8MB'", "DELETE FROM t WHERE id > 250", 1)
	RunNB(t, dir, cache, changed, nil, true)
	r = RunNB(t, dir, cache, strings.Replace(edited, "AS n FROM", "AS n  FROM", 1), nil, true)
	if !strings.Contains(r.Stderr, "restored from its snapshot") || r.Outputs["peek"] != "500" {
		t.Errorf("after a real change, settle was not given its state back (peek %q):\n%s", r.Outputs["peek"], r.Stderr)
	}
}

// TestRestoresOneLineEach: a cell that restored several times (abab's
// runs) joined every restore message into its one progress line and
// reason (issue 33: four on one line). Each restore has its own line as it
// happens; the cell's reason counts them.
func TestRestoresOneLineEach(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	src := holdsNB + `
# %% twice
_m = resources.mark()
for _ in range(3):
    pg.exec("DELETE FROM t WHERE id > 400")
    resources.reset(_m)
left = pg.query("SELECT count(*) AS n FROM t")[0]["n"]
`
	r := RunNB(t, dir, dir+"/cache", src, nil, true)
	if r.Status["twice"] != "ran" || r.Outputs["twice"] != "" {
		t.Fatalf("twice: %s %q\n%s", r.Status["twice"], r.Outputs["twice"], r.Stderr)
	}
	lines := 0
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.Contains(l, "restored from its snapshot") {
			lines++
			if strings.Count(l, "restored from its snapshot") != 1 {
				t.Errorf("a line with more than one restore: %q", l)
			}
		}
	}
	if lines != 3 {
		t.Errorf("%d lines name a restore, want 3:\n%s", lines, r.Stderr)
	}
	if want := "3 restores of postgres of cell cluster from its snapshots ("; !strings.Contains(r.Why["twice"], want) {
		t.Errorf("twice's reason %q does not contain %q", r.Why["twice"], want)
	}
}
