package postgres

import (
	"encoding/binary"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// TestClusterFromTemplate: the first host cluster of an installation runs
// initdb and keeps its output; the next is a copy of it that PostgreSQL
// itself (pg_controldata, the server) takes for a cluster of its own: its
// own system identifier, the catalog files a fresh initdb made, the same
// databases and encoding. A template that is broken is dropped and the
// cluster made by initdb, which keeps a new one. A cluster made in another
// time zone gets initdb's, not the template's.
func TestClusterFromTemplate(t *testing.T) {
	needs.Postgres(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	const src = `
pg = backend.postgres()
dbs = [r["datname"] for r in pg.query("SELECT datname FROM pg_database ORDER BY 1")]
enc = pg.query("SHOW server_encoding")[0]["server_encoding"]
`
	first := mustRunOwn(t, src)
	templates, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "benchbook", "postgres-initdb", "*"))
	if len(templates) != 1 {
		t.Fatalf("after the first cluster, templates %v, want one", templates)
	}
	tpl := templates[0]
	second := mustRunOwn(t, src)
	a, b := first["pg"].(*Handle).c.dataDir(), second["pg"].(*Handle).c.dataDir()
	for _, k := range []string{"dbs", "enc"} {
		if first[k].String() != second[k].String() {
			t.Errorf("%s: the copy shows %s, initdb's cluster %s", k, second[k], first[k])
		}
	}
	idA, idB, idT := controlID(t, a), controlID(t, b), controlID(t, tpl)
	t.Logf("system identifiers: initdb's %s, the copy's %s, the template's %s", idA, idB, idT)
	if idB == idA || idB == idT {
		t.Errorf("the copy has system identifier %s, as another cluster (%s, template %s)", idB, idA, idT)
	}
	if got := systemID(b); got != idB {
		t.Errorf("systemID reads %s, pg_controldata %s", got, idB)
	}
	if fa, fb := catalogFiles(t, a), catalogFiles(t, b); fa != fb {
		t.Errorf("the copy's catalog files differ from initdb's:\n%s\n---\n%s", fb, fa)
	}

	// A broken template: the next cluster is initdb's, and a new template
	// replaces the broken one.
	if err := os.Truncate(filepath.Join(tpl, "global", "pg_control"), 100); err != nil {
		t.Fatal(err)
	}
	third := mustRunOwn(t, src)
	if third["dbs"].String() != first["dbs"].String() {
		t.Errorf("after a broken template the cluster shows %s", third["dbs"])
	}
	if controlID(t, tpl) == "" {
		t.Errorf("the broken template was not replaced")
	}

	// initdb writes the zone it runs in into postgresql.conf: a cluster
	// made in another zone shows that zone, as its own initdb would.
	const zone = "Pacific/Chatham"
	t.Setenv("TZ", zone)
	zoned := mustRunOwn(t, src+`tz = pg.query("SHOW timezone")[0]["TimeZone"]`+"\n")
	if got := zoned["tz"]; got != starlark.String(zone) {
		t.Errorf("a cluster made with TZ=%s shows timezone %s", zone, got)
	}
}

// controlID is the system identifier pg_controldata reads in dir.
func controlID(t *testing.T, dir string) string {
	t.Helper()
	bin, err := lookBin("pg_controldata")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(bin, "-D", dir).Output()
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "Database system identifier:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// catalogFiles lists the relation files under base/ and global/ with
// their modes (the catalog initdb wrote; pg_control aside).
func catalogFiles(t *testing.T, dataDir string) string {
	t.Helper()
	var lines []string
	for _, sub := range []string{"base", "global"} {
		root := filepath.Join(dataDir, sub)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "pg_control" || strings.HasPrefix(d.Name(), "pg_internal.init") {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dataDir, p)
			lines = append(lines, rel+" "+strings.TrimSpace(fi.Mode().String()))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// systemID reads the system identifier pg_control holds: its first field,
// as newSystemID writes it.
func systemID(dataDir string) string {
	data, err := os.ReadFile(filepath.Join(dataDir, "global", "pg_control"))
	if err != nil || len(data) < 8 {
		return ""
	}
	return strconv.FormatUint(binary.LittleEndian.Uint64(data), 10)
}
