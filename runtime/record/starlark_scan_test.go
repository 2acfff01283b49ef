package record

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// regexpTokens is the oracle: starlarkLexer's regular expressions.
func regexpTokens(t testing.TB, src string) []chroma.Token {
	t.Helper()
	toks, err := chroma.Tokenise(starlarkLexer, nil, src)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

// checkScan fails if scanStarlark claims src and tokenises it otherwise than
// the regular expressions; it reports whether it claimed it.
func checkScan(t testing.TB, src string) bool {
	t.Helper()
	got, ok := scanStarlark(src)
	if !ok {
		return false
	}
	if want := regexpTokens(t, src); !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("source %q: token %d is %v, the regexps say %v", src, i, got[i], want[i])
			}
		}
		t.Fatalf("source %q: %d tokens, the regexps say %d", src, len(got), len(want))
	}
	return true
}

// Every Starlark file of the repository (notebooks, stdlib, test data)
// tokenises as the regular expressions do, and the notebooks and stdlib are
// scanned, not left to the regexps (else the scanner would buy nothing).
func TestScanStarlarkRepository(t *testing.T) {
	timing.Only(t, "one goroutine's scanner checked against chroma's regexps by brute force: nothing for -race to find, ten times slower under it")
	root := filepath.Join("..", "..")
	n := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".star") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		if !checkScan(t, string(src)) && (strings.HasPrefix(rel, "notebooks/") || strings.HasPrefix(rel, "stdlib/")) {
			t.Errorf("%s: left to the regexps", rel)
		}
		n++
		return nil
	})
	if n < 10 {
		t.Fatalf("found %d .star files under %s", n, root)
	}
}

// Random sources built from the pieces where the rules part ways (string
// prefixes and escapes, unterminated strings, def, words that start like
// keywords, numbers' edges, CR, Unicode spaces, digits and letters, bad
// UTF-8): wherever the scanner answers, it answers as the regexps do, and
// it answers for most of them.
func TestScanStarlarkRandom(t *testing.T) {
	timing.Only(t, "one goroutine's scanner checked against chroma's regexps by brute force: nothing for -race to find, ten times slower under it")
	pieces := []string{
		"x", "_a1", "def", "def f", "def\n  g", "def(", "define", "and", "andy", "in", "int", "if", "elif", "True", "Nonex",
		"print", "struct", "str", "table", "load",
		"0", "07", "0x1F", "0x", "0o17", "0o8", "1.", ".5", "1.5e3", "1e", "1e+", "2E-7", "1_0",
		"\"", "'", "\"\"\"", "'''", "r", "b", "rb", "Br", "R'", "\\", "\\\\", "\\\"", "\\'", "\"a\"", "'b'", "r\"c\"",
		"#", "# note", "\n", "\r\n", "\r", " ", "\t", "\v", "\f", "  ",
		"**", "**=", "//", "//=", "-", "+=", "==", "!=", "!", "~", "<<", "%", "&", "|", "^", "->",
		"[", "]", "(", ")", "{", "}", ",", ":", ";", ".", "@", "$", "?", "`", "\x00",
		"é", "µs", "\u00a0", "١", "\u2028", "\xff", "→",
	}
	rng := rand.New(rand.NewPCG(38, 1))
	scanned := 0
	const n = 20000
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if checkScan(t, b.String()) {
			scanned++
		}
	}
	if scanned < n/10 {
		t.Errorf("scanned %d of %d random sources, the rest left to the regexps", scanned, n)
	}
}

func FuzzScanStarlark(f *testing.F) {
	for _, s := range []string{"x = 1\n", "def f(a):\n  return a ** 2 # sq\n", `s = r"\"" + '''a''b'''`, "if x: pass\r\n", "0x1f.5e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) { checkScan(t, src) })
}

// The page shows the same HTML whichever tokeniser ran.
func TestHighlightScannedEqualsRegexp(t *testing.T) {
	src := "# %% c\ndef f(x):\n    return x ** 2  # square\nv = f(3) + 0x1F\ntable([{\"a\": r'\\d'}])\n"
	if _, ok := scanStarlark(src); !ok {
		t.Fatal("left to the regexps")
	}
	it, err := chroma.Coalesce(starlarkLexer).Tokenise(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	if err := codeFormatter.Format(&want, lightStyle, it); err != nil {
		t.Fatal(err)
	}
	if got := string(highlight(src)); got != want.String() {
		t.Errorf("highlight:\n%s\nregexps:\n%s", got, want.String())
	}
}

// formatCode writes what chroma's formatter (codeFormatter) writes for the
// same tokens: every .star file of the repository and random sources, on
// the scanner's tokens and on the regexps' (the fallback path).
func TestFormatCodeIsChromas(t *testing.T) {
	timing.Only(t, "one goroutine's scanner checked against chroma's regexps by brute force: nothing for -race to find, ten times slower under it")
	var srcs []string
	filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".star") {
			src, _ := os.ReadFile(path)
			srcs = append(srcs, string(src))
		}
		return nil
	})
	pieces := []string{"x", "def f", "\"s<&>\"", "'q'", "# c <b>\n", "\n", "\n\n", "  ", "\t", "1.5", "+", "(", ")", "é", "\r\n", "\"\"\"a\nb\"\"\"", "True", "print", "\""}
	rng := rand.New(rand.NewPCG(38, 3))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		srcs = append(srcs, b.String())
	}
	for _, src := range srcs {
		for _, lexer := range []chroma.Lexer{codeLexer, starlarkLexer} {
			it, err := chroma.Coalesce(lexer).Tokenise(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			tokens := it.Tokens()
			var want strings.Builder
			if err := codeFormatter.Format(&want, lightStyle, chroma.Literator(tokens...)); err != nil {
				t.Fatal(err)
			}
			if got := formatCode(tokens); got != want.String() {
				t.Fatalf("source %q:\nformatCode %q\nchroma     %q", src, got, want.String())
			}
		}
	}
}
