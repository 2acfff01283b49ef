package postgres

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/record"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// TestRolePasswordsStayOutOfTheDataDir: CREATE ROLE and ALTER ROLE with a
// PASSWORD in every quoting ('PW', E'PW', U&'PW', $$PW$$, $q$PW$q$),
// through the handle (one of them failing, which the server
// logs), through a second client on the cluster's DSN, and failing through
// pg.query and workload.sql, leave the password in no file of the cache
// (not the data dir, not its snapshots, not the server log) and in none of
// the records (HTML, Markdown, JSON). Before, pg_stat_statements kept the
// statements' text in the data dir and every snapshot copied it, and a
// failing statement from pg.query or workload.sql reached postgres.log.
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
other.exec("ALTER ROLE r21 PASSWORD $q$Role24pW$q$")
other.exec("ALTER ROLE r21 ENCRYPTED PASSWORD E'Role25pW'")
pg.exec("ALTER ROLE r18 PASSWORD $$Role26pW$$")
pg.exec("ALTER ROLE r18 PASSWORD U&'Role27pW'")
pg.exec("CREATE TABLE t (x int)")

# %% again
pg.exec("CREATE ROLE r18 LOGIN PASSWORD 'Role20pW'")

# %% queried
pg.query("ALTER ROLE nobody WITH PASSWORD 'Role22pW'")

# %% flood
flood = workload.sql(pg, query = "CREATE ROLE r18 PASSWORD 'Role23pW'", clients = 1, duration = "0.3s", warmup = 0)
flood.errors

# %% stats
s = pg.stats()
texts = [r["query"] for r in pg.query("SELECT query FROM pg_stat_statements")]
`
	passwords := []string{"Role18pW", "Role19pW", "Role20pW", "Role21pW", "Role22pW", "Role23pW", "Role24pW", "Role25pW", "Role26pW", "Role27pW"}
	nbPath := filepath.Join(dir, "nb.star")
	os.WriteFile(nbPath, []byte(src), 0o644)
	nb, err := runtime.ParseFile(nbPath)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	e, err := runtime.Open(context.Background(), nb, runtime.Options{Stderr: &stderr, Modules: modules})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	rec := e.Record()
	if st := e.CellRun("roles"); st.Err != nil {
		t.Fatalf("roles: %v\n%s", st.Err, stderr.String())
	}
	for _, c := range []struct{ cell, want string }{{"again", "already exists"}, {"queried", "does not exist"}} {
		if st := e.CellRun(c.cell); st.Err == nil || !strings.Contains(st.Err.Error(), c.want) {
			t.Fatalf("%s: %v, want %q", c.cell, st.Err, c.want)
		}
	}
	// The server saw every failing CREATE ROLE of the load, and kept none
	// of the texts in pg_stat_statements while it ran.
	if errs, err := e.Eval("flood.errors"); err != nil || !strings.Contains(fmt.Sprint(errs), "sqlstate 42710") {
		t.Fatalf("the flood's statements did not fail as duplicates: %v %v", errs, err)
	}
	if texts, err := e.Eval("texts"); err != nil || len(texts) != 1 || containsAny(texts[0].String(), passwords) != "" {
		t.Errorf("pg_stat_statements holds a password: %v %v", texts, err)
	}
	e.Close()
	var html, js bytes.Buffer
	if err := record.HTML(&html, rec); err != nil {
		t.Fatal(err)
	}
	if err := record.JSON(&js, rec); err != nil {
		t.Fatal(err)
	}
	if err := record.Markdown(rec, filepath.Join(dir, "nb.md")); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "nb.md"))
	for what, text := range map[string][]byte{"HTML": html.Bytes(), "JSON": js.Bytes(), "Markdown": md} {
		if pw := containsAny(string(text), passwords); pw != "" {
			t.Errorf("the %s record holds %s", what, pw)
		}
	}
	files, snapshotFiles, logBytes := 0, 0, 0 // what was scanned: a scan of nothing proves nothing
	filepath.Walk(filepath.Join(dir, ".benchbook"), func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		files++
		if sep := string(filepath.Separator); strings.Contains(p, sep+"states"+sep) || strings.Contains(p, sep+"snapshots"+sep) {
			snapshotFiles++ // a state snapshot (resstate) or pg.snapshot(name)
		}
		data, _ := os.ReadFile(p)
		if filepath.Base(p) == "postgres.log" {
			logBytes += len(data)
		}
		if pw := containsAny(string(data), passwords); pw != "" {
			t.Errorf("%s holds %s", strings.TrimPrefix(p, dir), pw)
		}
		return nil
	})
	if files < 100 || snapshotFiles < 100 || logBytes == 0 {
		t.Errorf("%d files under the cache, %d in snapshots, %d bytes of postgres.log: the scan would prove nothing", files, snapshotFiles, logBytes)
	}
}

// containsAny returns the first of words in s, "" for none.
func containsAny(s string, words []string) string {
	for _, w := range words {
		if strings.Contains(s, w) {
			return w
		}
	}
	return ""
}
