package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The glue a new user's first study tripped over (issue 52): each test
// here failed before its fix.

// TestRenderIntoAMissingFolder: render -o and run -o write the record into
// a folder that does not exist yet, in every format, instead of failing.
func TestRenderIntoAMissingFolder(t *testing.T) {
	nb := writeNB(t, "# %% a\nx = 1\nx\n")
	if code, _, stderr := runCLI(t, "run", nb); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	dir := t.TempDir()
	for _, format := range []string{"html", "md", "json"} {
		out := filepath.Join(dir, "records", format, "deep", "nb."+format)
		code, _, stderr := runCLI(t, "render", "-format", format, "-o", out, nb)
		if code != 0 {
			t.Errorf("render -o %s: exit %d\n%s", out, code, stderr)
			continue
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("render -o %s: %v", out, err)
		}
	}
	out := filepath.Join(dir, "ran", "nb.html")
	if code, _, stderr := runCLI(t, "run", "-o", out, nb); code != 0 {
		t.Errorf("run -o %s: exit %d\n%s", out, code, stderr)
	}
}

// TestUsageListsEveryTemplate: the top-level usage names every template
// benchbook new has, the container one included.
func TestUsageListsEveryTemplate(t *testing.T) {
	_, _, stderr := runCLI(t, "-h")
	line := ""
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "new ") {
			line = l
		}
	}
	for _, name := range templateNames() {
		if !strings.Contains(line, name) {
			t.Errorf("benchbook -h: the new command's line %q does not name the %s template", line, name)
		}
	}
}

// TestDefaultParamGivenIsCached: -p NAME=VALUE where VALUE is the
// parameter's default is the run without it: render -p pairs=6 after a run
// without -p (and the other way round) finds every cell in the cache,
// instead of marking every cell "never".
func TestDefaultParamGivenIsCached(t *testing.T) {
	nb := writeNB(t, `# %% params
pairs = param("pairs", 6)
rate = param("rate", 2.5)
name = param("name", "abab")

# %% use
x = pairs * rate
x
`)
	if code, _, stderr := runCLI(t, "run", nb); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"-p", "pairs=6"},
		{"-p", "pairs=6", "-p", "rate=2.5", "-p", "name=abab"},
		{"-p", "rate=2.50"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"render"}, args...), nb)...)
		if code != 0 || !strings.Contains(stderr, "2 cells: 2 hit") {
			t.Errorf("render %v after a run without -p: exit %d, want every cell a hit:\n%s", args, code, stderr)
		}
	}
	// Another value is another run: never computed.
	if code, _, stderr := runCLI(t, "render", "-p", "pairs=7", nb); code != 0 || !strings.Contains(stderr, "2 never") {
		t.Errorf("render -p pairs=7: exit %d, want never computed:\n%s", code, stderr)
	}
	// And the other way: a run with the default given, a render without.
	nb2 := writeNB(t, "# %% params\npairs = param(\"pairs\", 6)\npairs\n")
	if code, _, stderr := runCLI(t, "run", "-p", "pairs=6", nb2); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "run", nb2); code != 0 || !strings.Contains(stderr, "1 cells: 1 hit") {
		t.Errorf("run without -p after run -p pairs=6: exit %d, want a hit:\n%s", code, stderr)
	}
}

// TestRerunBuildsAgain: -rerun of the cell that calls build() builds the
// binary again (it reused the cached file, built with whatever the
// toolchain was then); a plain rerun still takes the cache.
func TestRerunBuildsAgain(t *testing.T) {
	repo := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":            "module example.com/hello\n\ngo 1.22\n",
		"cmd/hello/main.go": "package main\n\nfunc main() { println(\"hello\") }\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "v1"}} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	nb := writeNB(t, fmt.Sprintf("# %%%% builds\nb = build(\"./cmd/hello\", repo = %q, cgo = False)\nb.path\n", repo))
	built := func(args ...string) (string, time.Time) {
		t.Helper()
		code, out, stderr := runCLI(t, append(append([]string{"run", "-format", "json", "-o", filepath.Join(t.TempDir(), "r.json")}, args...), nb)...)
		if code != 0 {
			t.Fatalf("run %v: exit %d\n%s%s", args, code, out, stderr)
		}
		return stderr, newestBinary(t, filepath.Dir(nb))
	}
	first, t1 := built()
	if !strings.Contains(first, "build: ./cmd/hello at") {
		t.Fatalf("first run did not build:\n%s", first)
	}
	again, t2 := built()
	if strings.Contains(again, "build: ./cmd/hello") || !t2.Equal(t1) {
		t.Errorf("a plain rerun built again:\n%s", again)
	}
	time.Sleep(10 * time.Millisecond)
	forced, t3 := built("-rerun", "builds")
	if !strings.Contains(forced, "build: ./cmd/hello at") || !t3.After(t1) {
		t.Errorf("-rerun builds did not build again (binary from %s, first %s):\n%s", t3, t1, forced)
	}
}

// newestBinary is the modification time of the newest built binary under
// the notebook's cache.
func newestBinary(t *testing.T, dir string) time.Time {
	t.Helper()
	var newest time.Time
	filepath.WalkDir(filepath.Join(dir, ".benchbook"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "hello" {
			if fi, err := d.Info(); err == nil && fi.ModTime().After(newest) {
				newest = fi.ModTime()
			}
		}
		return nil
	})
	if newest.IsZero() {
		t.Fatal("no built binary under the cache")
	}
	return newest
}
