package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// The key's normal form drops comments, blank lines and trailing blanks
// outside string literals only.
func TestNormalFormKeepsStrings(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"blank line inside triple quotes", "x = \"\"\"alpha\nbeta\"\"\"\n", "x = \"\"\"alpha\n\nbeta\"\"\"\n", false},
		{"trailing blank inside triple quotes", "x = \"\"\"alpha\nbeta\"\"\"\n", "x = \"\"\"alpha  \nbeta\"\"\"\n", false},
		{"hash inside a string", "x = \"a#b\"\n", "x = \"a#c\"\n", false},
		{"hash inside triple quotes", "x = '''a\n# b\n'''\n", "x = '''a\n# c\n'''\n", false},
		{"escaped quote then hash", "x = \"a\\\" # b\"\n", "x = \"a\\\" # c\"\n", false},
		{"comment line inside a raw string", "x = r'''\n#\n'''\n", "x = r'''\n'''\n", false},
		{"load name with a hash", "load(\"m.star\", y = \"a#b\")\n", "load(\"m.star\", y = \"a#c\")\n", false},
		{"comments and blank lines", "x = 1\ny = 2\n", "# intro\n\nx = 1   # one\n\n\n  # indented comment\ny = 2\n\n", true},
		{"comment after a string", "x = \"a\"\n", "x = \"a\" # a comment with \"quotes\"\n", true},
		{"crlf line ends", "x = \"\"\"a\nb\"\"\"\ny = 1\n", "x = \"\"\"a\r\nb\"\"\"\r\n\r\ny = 1\r\n", true},
		{"indentation is code", "if True:\n    x = 1\n    y = 2\n", "if True:\n    x = 1\ny = 2\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			na, nb := normalize(tc.a), normalize(tc.b)
			if (na == nb) != tc.same {
				t.Errorf("normal forms equal = %v, want %v:\n%q\n%q", na == nb, tc.same, na, nb)
			}
		})
	}
}

// A run killed between writing a temp file and renaming it leaves the temp
// file behind; the next run (and so clean) removes it.
func TestTempFilesOfKilledRunRemoved(t *testing.T) {
	dir := t.TempDir()
	src := "# %% a\nx = memo(\"k\", lambda: 1)\nx\n"
	first := runNotebook(t, dir, src, Options{})
	store := first.e.store.dir
	left := []string{
		filepath.Join(store, "memo", "ab", "abcdef", ".tmp-123456"),
		filepath.Join(store, "entries", "cd", ".tmp-987"),
		filepath.Join(store, "entries", "cd", "cdef.tmp-link"),
	}
	for _, p := range left {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("half a checkpoint"), 0o644)
	}
	again := runNotebook(t, dir, "", Options{})
	if again.status("a") != StatusHit {
		t.Errorf("a: %s", again.status("a"))
	}
	for _, p := range left {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s survived the next run", p)
		}
	}
}
