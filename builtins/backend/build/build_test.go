package build_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/backend/build"
)

func TestBuild(t *testing.T) {
	repo := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitc := func(args ...string) string {
		out, err := build.Git(context.Background(), repo, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	gitc("init", "-q")
	write("go.mod", "module example.com/hello\n\ngo 1.22\n")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"hello v1\") }\n")
	gitc("add", ".")
	gitc("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "v1")
	v1 := gitc("rev-parse", "HEAD")
	src := fmt.Sprintf(`
b = build("./cmd/hello", rev = "HEAD", repo = %q)
assert.eq(b.rev, %q)
assert.eq(len(b.sha256), 64)
assert.true(not b.dirty)
p = backend.process(b, ready = "log:hello v1")
`, repo, v1)
	g := mustRun(t, src)
	b1 := g["b"].(*build.Binary).Info()
	start := time.Now()
	g = mustRun(t, src) // the same revision: from the cache
	if b2 := g["b"].(*build.Binary).Info(); b2 != b1 || time.Since(start) > 2*time.Second {
		t.Fatalf("rebuilt the same revision: %+v vs %+v in %s", b1, b2, time.Since(start))
	}
	h1, _ := build.GitInputHash(repo + "@HEAD")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"hello v2\") }\n")
	if h, _ := build.GitInputHash(repo + "@"); !strings.Contains(h, "+") {
		t.Fatalf("working tree input %q does not say dirty", h)
	}
	gitc("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "v2")
	if h2, _ := build.GitInputHash(repo + "@HEAD"); h2 == h1 {
		t.Fatal("a new commit left the git input unchanged")
	}
	g = mustRun(t, fmt.Sprintf(`
b = build("./cmd/hello", repo = %q)
p = backend.process(b, ready = "log:hello v2")
`, repo))
	if b3 := g["b"].(*build.Binary).Info(); b3.SHA256 == b1.SHA256 || b3.Rev == b1.Rev {
		t.Fatalf("new revision, same binary: %+v", b3)
	}
	_, err := run(t, fmt.Sprintf(`build("./cmd/hello", rev = "no-such-rev", repo = %q)`, repo))
	if err == nil || !strings.Contains(err.Error(), "build: rev \"no-such-rev\"") {
		t.Fatalf("error %v", err)
	}
}

// TestBuildOptions: cgo, tags, ldflags and env reach go build, and a build
// with other options is another binary (cached apart): cgo = False is
// static, cgo = True with a package that uses the C resolver is not, and
// says which loader it needs.
func TestBuildOptions(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler: cgo = True cannot link")
	}
	repo := t.TempDir()
	files := map[string]string{
		"go.mod":            "module example.com/hello\n\ngo 1.22\n",
		"cmd/hello/main.go": "package main\n\nimport \"net\"\n\nvar version = \"dev\"\nvar fast = \"\"\n\nfunc main() { _ = net.IPv4len; println(\"hello\", version, fast) }\n",
		"cmd/hello/fast.go": "//go:build fast\n\npackage main\n\nfunc init() { fast = \"fast\" }\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "v1"}} {
		if _, err := build.Git(context.Background(), repo, args...); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, fmt.Sprintf(`
s = build("./cmd/hello", repo = %[1]q, cgo = False, tags = ["fast"], ldflags = "-X main.version=v9", env = {"GOAMD64": "v1"})
assert.true(s.static)
assert.eq(s.interpreter, "")
assert.true("CGO_ENABLED=0" in s.settings and "-tags fast" in s.settings and "GOAMD64=v1" in s.settings, s.settings)
p = backend.process(s, ready = "log:hello v9 fast")
d = build("./cmd/hello", repo = %[1]q, cgo = True)
assert.true(not d.static)
assert.true(d.interpreter.startswith("/"), d.interpreter)
assert.true(d.path != s.path and d.sha256 != s.sha256)
q = backend.process(d, ready = "log:hello dev")
`, repo))
	for _, tc := range []struct{ src, want string }{
		{`build("./cmd/hello", repo = %q, cgo = "no")`, "build: cgo must be True, False or None, got string"},
		{`build("./cmd/hello", repo = %q, env = {"CGO_ENABLED": "0"})`, "build: env: CGO_ENABLED is set by cgo = True or False"},
		{`build("./cmd/hello", repo = %q, tags = [1])`, "build: tags: want strings, got int"},
	} {
		if _, err := run(t, fmt.Sprintf(tc.src, repo)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
