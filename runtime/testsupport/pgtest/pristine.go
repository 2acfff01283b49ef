package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Pristine is a notebook's cluster as backend.postgres() first made it:
// the resource dir of the cell that created it (RESOURCES/OWNER/postgres)
// holding only its initial snapshot, its data as that snapshot and its
// generation file. A test whose notebooks start clusters of their own seeds
// each fresh cache with it (Seed) instead of running initdb again: the
// cluster cell then finds its data dir and starts it, as a second run of
// the notebook would. The owner is the creating cell's name and key, so a
// pristine cluster fits the notebook (cell source and parameters) whose
// first run it was taken from.
type Pristine struct{ Dir string }

// KeepPristine copies, from cache (a notebook's cache dir after its first
// run), the one cluster its resources hold, as its first run left it.
func KeepPristine(t testing.TB, cache string) Pristine {
	t.Helper()
	roots, _ := filepath.Glob(filepath.Join(cache, "resources", "*", "postgres"))
	if len(roots) != 1 {
		t.Fatalf("pgtest: want one cluster resource dir in %s, got %v", cache, roots)
	}
	root := roots[0]
	initial, _ := filepath.Glob(filepath.Join(root, "states", "pg-*"))
	if len(initial) != 1 {
		t.Fatalf("pgtest: want one initial snapshot in %s, got %v", root, initial)
	}
	p := Pristine{Dir: t.TempDir()}
	to := filepath.Join(p.Dir, filepath.Base(filepath.Dir(root)), "postgres")
	if err := os.MkdirAll(filepath.Join(to, "states"), 0o755); err != nil {
		t.Fatal(err)
	}
	cp(t, initial[0], filepath.Join(to, "data"))
	cp(t, initial[0], filepath.Join(to, "states", filepath.Base(initial[0])))
	cp(t, filepath.Join(root, "generation"), filepath.Join(to, "generation"))
	return p
}

// Seed gives cache (a notebook's cache dir, empty) the pristine cluster,
// where its first run's initdb would have put one. The data dir is copied
// (PostgreSQL writes to it); the initial snapshot is hard-linked: benchbook
// only reads a snapshot (a restore copies it out, and a new snapshot of the
// same name replaces its files rather than writing into them), so the
// pristine copy stays pristine for every cache seeded from it.
func (p Pristine) Seed(t testing.TB, cache string) {
	t.Helper()
	owners, err := os.ReadDir(p.Dir)
	if err != nil || len(owners) != 1 {
		t.Fatalf("pgtest: pristine %s: %v %v", p.Dir, owners, err)
	}
	from := filepath.Join(p.Dir, owners[0].Name(), "postgres")
	to := filepath.Join(cache, "resources", owners[0].Name(), "postgres")
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	cp(t, filepath.Join(from, "data"), filepath.Join(to, "data"))
	cp(t, filepath.Join(from, "generation"), filepath.Join(to, "generation"))
	cp(t, filepath.Join(from, "states"), filepath.Join(to, "states"), "-l")
	traversable(t, to)
}

// traversable adds o+x to dir and its ancestors where they lack it, as
// backend.postgres does before its initdb (which a seeded cache skips): the
// cluster runs as the postgres user, and t.TempDir() is 0700.
func traversable(t testing.TB, dir string) {
	t.Helper()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// cp copies with cp -a (owners and modes kept: the data dir is the
// postgres account's, 0700), plus flags (-l: hard links, not copies).
func cp(t testing.TB, from, to string, flags ...string) {
	t.Helper()
	args := append([]string{"-a"}, flags...)
	if out, err := exec.Command("cp", append(args, from, to)...).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v %s", from, err, out)
	}
}
