package statetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/needs"
)

// A data dir changed while benchbook was not running (a server started on
// it by hand) is seen by its last checkpoint having moved: benchbook warns
// and restores the state a cell needs before running it.
func TestOutsideChangeIsDetected(t *testing.T) {
	needs.Postgres(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	if r := RunNB(t, dir, cache, reproNB, nil, true); r.Outputs["measure"] != "200" {
		t.Fatalf("first run: %q", r.Outputs["measure"])
	}
	roots, _ := filepath.Glob(filepath.Join(cache, "resources", "cluster-*", "postgres"))
	if len(roots) != 1 {
		t.Fatalf("cluster dir: %v", roots)
	}
	byHand(t, filepath.Join(roots[0], "data"), "DELETE FROM t WHERE id > 10")

	path := filepath.Join(dir, "nb.star")
	nb, err := runtime.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	e, err := runtime.Open(context.Background(), nb, runtime.Options{CacheDir: cache, Stderr: &stderr, Rerun: []string{"measure"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	e.Close()
	if got := e.CellRun("measure").Outputs(); len(got) != 1 || got[0].String() != "200" {
		t.Fatalf("measure after an outside change shows %v, want 200\n%s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), "changed outside benchbook") {
		t.Errorf("no warning about the outside change:\n%s", stderr.String())
	}
}

// byHand starts PostgreSQL on dataDir as its owner, runs sql and stops it,
// as a user with psql in another terminal would.
func byHand(t *testing.T, dataDir, sql string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		t.Skip("pg_ctl not found")
	}
	sock, _ := os.MkdirTemp("", "bbout")
	os.Chmod(sock, 0o777)
	defer os.RemoveAll(sock)
	pgctl := func(args ...string) {
		cmd := exec.Command(bins[len(bins)-1], args...)
		if os.Getuid() == 0 {
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", bins[len(bins)-1]}, args...)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pg_ctl %v: %v\n%s", args, err, out)
		}
	}
	// -l: the server must not hold our output pipe open.
	pgctl("-D", dataDir, "-w", "-l", filepath.Join(sock, "log"), "-o", fmt.Sprintf("-p %d -k %s", port, sock), "start")
	defer pgctl("-D", dataDir, "-w", "-m", "fast", "stop")
	conn, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}
