package build_test

import (
	"context"
	"fmt"
	"os"
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
