package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// TestRolePasswordsStayOutOfTheDataDir: CREATE ROLE and ALTER ROLE with a
// PASSWORD, through the handle (one of them failing, which the server
// logs) and through a second client on the cluster's DSN, leave the
// password in no file of the cache: not the data dir, not its snapshots,
// not the server log, not the record's sources. Before,
// pg_stat_statements kept the statements' text in the data dir and every
// snapshot copied it.
func TestRolePasswordsStayOutOfTheDataDir(t *testing.T) {
	t.Parallel()
	needs.Postgres(t)
	dir := t.TempDir()
	src := `# %% cluster
pg = backend.postgres()

# %% roles
pg.exec("CREATE ROLE r18 LOGIN PASSWORD 'Role18pW'")
pg.exec("ALTER ROLE r18 WITH PASSWORD 'Role19pW'")
other = backend.postgres(dsn = pg.dsn)
other.exec("CREATE ROLE r21 PASSWORD 'Role21pW'")
pg.exec("CREATE TABLE t (x int)")

# %% again
pg.exec("CREATE ROLE r18 LOGIN PASSWORD 'Role20pW'")

# %% stats
s = pg.stats()
`
	os.WriteFile(filepath.Join(dir, "nb.star"), []byte(src), 0o644)
	nb, err := runtime.ParseFile(filepath.Join(dir, "nb.star"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	e.Close()
	if st := e.CellRun("roles"); st.Err != nil {
		t.Fatalf("roles: %v\n%s", st.Err, stderr.String())
	}
	if st := e.CellRun("again"); st.Err == nil || !strings.Contains(st.Err.Error(), "already exists") {
		t.Fatalf("again: %v", st.Err)
	}
	files := 0
	filepath.Walk(filepath.Join(dir, ".benchbook"), func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		files++
		data, _ := os.ReadFile(p)
		for _, pw := range []string{"Role18pW", "Role19pW", "Role20pW", "Role21pW"} {
			if strings.Contains(string(data), pw) {
				t.Errorf("%s holds %s", strings.TrimPrefix(p, dir), pw)
			}
		}
		return nil
	})
	if files < 100 {
		t.Errorf("only %d files under the cache: no data dir?", files)
	}
}
