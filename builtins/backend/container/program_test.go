package container

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/backend/build"
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
)

// serverRepo is a git repository holding a Go HTTP server that listens on
// $PORT and says "ready": net/http, so built with cgo it links the C
// resolver dynamically.
func serverRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	for name, text := range map[string]string{
		"go.mod": "module example.com/srv\n\ngo 1.22\n",
		"cmd/srv/main.go": `package main

import (
	"net/http"
	"os"
)

func main() {
	println("ready")
	http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
}
`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "v1"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// TestBuiltBinaryAsContainer (issue 52): a binary from build() runs in a
// container without a volumes bind: backend.container(b) makes an image of
// the static binary alone, and cmd = [b, ...] runs it in another image;
// a dynamically linked binary is refused for an image of its own, and in
// an image without its loader the error says why, not just "no such file
// or directory". Real engine, images made offline.
func TestBuiltBinaryAsContainer(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler: a dynamically linked build needs one")
	}
	e := dockertest.Engine(t)
	tool := dockertest.Tool(t, e)
	repo := serverRepo(t)
	mods := append(backendtest.Modules(Kind, build.Kind), modules[2:]...)
	dir := t.TempDir()
	exec := func(src string) error {
		_, err := backendtest.ExecIn(t, mods, dir, src, nil)
		return err
	}
	p1, p2 := backendtest.FreePort(t), backendtest.FreePort(t)
	if err := exec(fmt.Sprintf(`
s = build("./cmd/srv", repo = %[1]q, cgo = False)
own = backend.container(s, env = {"PORT": "%[2]d"}, ready = "http://127.0.0.1:%[2]d/")
r = workload.http(own.url + "/", clients = 1, duration = "0.5s", warmup = "0s", observe = [own])
assert.eq(r.valid, True)
assert.true(r.count > 0, r.count)
assert.true(own.image.startswith("benchbook-bin/srv:" + s.sha256[:12]), own.image)
other = backend.container(%[4]q, cmd = [s], env = {"PORT": "%[3]d"}, ready = "http://127.0.0.1:%[3]d/")
r2 = workload.http(other.url + "/", clients = 1, duration = "0.5s", warmup = "0s", observe = [other])
assert.true(r2.count > 0 and len(r2.errors) == 0, r2.errors)
`, repo, p1, p2, tool)); err != nil {
		t.Fatal(err)
	}
	err := exec(fmt.Sprintf(`
d = build("./cmd/srv", repo = %q, cgo = True)
backend.container(d, env = {"PORT": "%d"})
`, repo, p1))
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") || !strings.Contains(err.Error(), "cgo = False") {
		t.Errorf("a dynamically linked binary as an image of its own: %v", err)
	}
	err = exec(fmt.Sprintf(`
d = build("./cmd/srv", repo = %q, cgo = True)
backend.container(%q, cmd = [d], env = {"PORT": "%d"}, ready = "log:ready")
`, repo, tool, p1))
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("a dynamically linked binary in an image without its loader: %v", err)
	}
	t.Logf("the error: %v", err)
}
