package backendtest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/docker"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/workload"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
	"github.com/benchbook/benchbook/stdlib"
)

// Modules are the modules a kind's tests run with: the backend module of
// kinds as the module root makes it (backend.<kind>, the top-level build,
// their decoders and input kinds) for a kind's own test binary, which
// cannot link the root (it imports the kind), and workload, which Load
// snippets drive.
func Modules(kinds ...handle.Kind) []runtime.Module {
	return []runtime.Module{handle.Module(kinds, nil), workload.Module(workload.Options{})}
}

// Exec runs Starlark src in a new session, in a cell named after the
// test, with mods (Modules), assert and globals.
func Exec(t testing.TB, mods []runtime.Module, src string, globals starlark.StringDict) (starlark.StringDict, error) {
	t.Helper()
	return ExecIn(t, mods, "", src, globals)
}

// ExecIn is Exec with dir as the notebook's and the cache's directory, so
// that runs of one test share what they leave there ("": a new one).
func ExecIn(t testing.TB, mods []runtime.Module, dir, src string, globals starlark.StringDict) (starlark.StringDict, error) {
	t.Helper()
	return startest.Exec(t, startest.Options{NotebookDir: dir, CacheDir: dir,
		Cell: &runtime.Cell{Name: strings.ReplaceAll(t.Name(), "/", "_")}, Modules: mods, Stdlib: stdlib.FS, Globals: globals}, src)
}

// MustExec is Exec that fails the test on an error.
func MustExec(t testing.TB, mods []runtime.Module, src string, globals starlark.StringDict) starlark.StringDict {
	t.Helper()
	g, err := Exec(t, mods, src, globals)
	if err != nil {
		t.Fatal(startest.Describe(err))
	}
	return g
}

// StartHelper re-executes this test binary as a benchbook with env set,
// running the tests that match run ("^$": none, for a helper that TestMain
// dispatches on its env), which start what the test needs and print one
// line about it; StartHelper returns that line (all the helper printed when
// it failed first). The helper is killed when the test ends.
func StartHelper(t testing.TB, run string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v=false")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck // often gone already
	r := bufio.NewReader(out)
	line, _ := r.ReadString('\n')
	if strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "panic") {
		// The helper failed before it could say anything else; what it
		// logged follows, and it is exiting: keep it for the test's error.
		rest, _ := io.ReadAll(r)
		line += string(rest)
	}
	return cmd, line
}

// FreePort is a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// OKServer is an HTTP target on loopback that answers "ok", for a run
// whose traffic goes elsewhere than the handle under test.
func OKServer(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// InPidNamespace runs argv, with env added, as the first process of a pid
// namespace of its own (and its own /proc), and returns its output. What a
// benchbook starts there is labelled with that namespace, so no benchbook
// outside it (another test binary, another run on the box) ever takes its
// owner for gone: only what runs inside sweeps its containers, and a test
// of that sweep cannot be raced. Needs root and unshare(1).
func InPidNamespace(t testing.TB, env []string, argv ...string) (string, error) {
	t.Helper()
	unshare := needs.Command(t, "unshare", "util-linux")
	if os.Geteuid() != 0 {
		needs.Missing(t, "root (for a pid namespace of the test's own)", "run the tests as root")
	}
	cmd := exec.Command(unshare, append([]string{"--pid", "--fork", "--mount-proc", "--kill-child"}, argv...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// ToolEngine is the container engine and the test image on it
// (dockertest.Tool: one static program, FROM scratch), for tests outside
// builtins/ that cannot import dockertest; without an engine the test
// skips (fails under CI).
func ToolEngine(t testing.TB) (*docker.Engine, string) {
	t.Helper()
	e := dockertest.Engine(t)
	return e, dockertest.Tool(t, e)
}
