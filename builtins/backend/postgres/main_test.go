package postgres

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/container"
	"github.com/benchbook/benchbook/builtins/backend/process"
	"github.com/benchbook/benchbook/builtins/hidden"
	"github.com/benchbook/benchbook/builtins/host"
	"github.com/benchbook/benchbook/builtins/metric"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// One cluster serves the whole test binary. It is created by a first
// session (the "setup" run, which also creates a table) and stopped, then
// started again by a second session over the same cache dir and cell key:
// that second start is the resource-reuse check (reuseRows).
// modules are what the tests' code sees: backend.postgres, the process and
// container kinds the tests start beside it, workload, host and metric.
var modules = append(backendtest.Modules(Kind, process.Kind, container.Kind), host.Module(), metric.Module())

// moduleSet is modules merged, for the tests' bare sessions.
var moduleSet = runtime.MustModuleSet(nil, modules...)

var (
	shared    *Handle
	sharedDir string
	reuseRows int64 = -1
)

func TestMain(m *testing.M) {
	hidden.Run() // the supervisor and the reaper re-execute the test binary
	if dir := os.Getenv("BACKEND_REAPER_HELPER"); dir != "" {
		zombieHelper(dir) // never returns
	}
	if dir := os.Getenv("BACKEND_HOLD_HELPER"); dir != "" {
		holdHelper(dir) // never returns
	}
	if arg := os.Getenv("BACKEND_RESTORE_HELPER"); arg != "" {
		restoreHelper(arg) // never returns
	}
	if dir := os.Getenv("BACKEND_CONTAINER_ORPHAN"); dir != "" {
		containerOrphanHelper(dir) // never returns
	}
	if backendtest.InHelper() {
		os.Exit(m.Run()) // the conformance suite's cleanup helper needs no shared cluster
	}
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "bbpg-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sharedDir = dir
	if err := firstRun(dir); err != nil {
		fmt.Fprintln(os.Stderr, "first run:", err)
		return 1
	}
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: dir, CacheDir: dir, Modules: moduleSet}
	defer s.Close()
	th := s.NewThread(&runtime.Cell{Name: "setup", Key: "0123456789abcdef0123"})
	g, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "setup.star", `
pg = backend.postgres(settings = {"shared_buffers": "32MB"})
n = pg.query("SELECT count(*) AS n FROM reuse_t")[0]["n"]
`, moduleSet.Globals())
	if err != nil {
		fmt.Fprintln(os.Stderr, "second run:", err)
		return 1
	}
	shared = g["pg"].(*Handle)
	reuseRows, _ = g["n"].(starlark.Int).Int64()
	return m.Run()
}

// firstRun is an earlier "benchbook run": it creates the cluster and a table,
// then ends (stopping the server).
func firstRun(dir string) error {
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: dir, CacheDir: dir, Modules: moduleSet}
	defer s.Close()
	th := s.NewThread(&runtime.Cell{Name: "setup", Key: "0123456789abcdef0123"})
	_, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "setup.star", `
pg = backend.postgres(settings = {"shared_buffers": "32MB"})
pg.exec("CREATE TABLE reuse_t (id int); INSERT INTO reuse_t SELECT generate_series(1, 42)")
`, moduleSet.Globals())
	return err
}

// run executes Starlark src with pg and assert predeclared, in a new cell of
// the shared session's cache dir.
func run(t *testing.T, src string) (starlark.StringDict, error) {
	t.Helper()
	return startest.Exec(t, startest.Options{NotebookDir: sharedDir, CacheDir: sharedDir,
		Cell: &runtime.Cell{Name: strings.ReplaceAll(t.Name(), "/", "_")}, Modules: modules, Globals: starlark.StringDict{"pg": shared}}, src)
}

// mustRunOwn runs src in a notebook and cache dir of the test's own, for a
// parallel test whose clusters are its own (no pg).
func mustRunOwn(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	g, err := startest.Exec(t, startest.Options{Modules: modules, Cell: &runtime.Cell{Name: strings.ReplaceAll(t.Name(), "/", "_")}}, src)
	if err != nil {
		t.Fatal(startest.Describe(err))
	}
	return g
}

func mustRun(t *testing.T, src string) starlark.StringDict {
	t.Helper()
	g, err := run(t, src)
	if err != nil {
		t.Fatal(startest.Describe(err))
	}
	return g
}
