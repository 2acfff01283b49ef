package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
