package startest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

func TestRunFiles(t *testing.T) {
	RunFiles(t, "testdata/*.star", nil)
}

// recorder is a reporter that keeps what it was told.
type recorder struct{ msgs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// The harness fails a test for each way a chunk can disagree with its
// expectations, at the file's own line numbers (the oracle is the line a
// human counts in the file).
func TestMismatchesAreReported(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.star")
	src := "a = 1\n---\nb = 1 // 0  ### \"division\"\n---\nc = 1 // 0  ### \"nope\"\n---\nd = 1 // 0\n---\ne = 1  ### \"never\"\n---\nf = 1  ### not-quoted\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	chunks := readChunks(r, file)
	if len(chunks) != 6 {
		t.Fatalf("%d chunks, want 6", len(chunks))
	}
	for _, c := range chunks {
		_, err := starlark.ExecFileOptions(&syntax.FileOptions{}, &starlark.Thread{}, file, c.src, nil)
		for _, le := range errorLines(err, file) {
			c.gotError(r, le.line, le.msg)
		}
		c.done(r)
	}
	want := []string{
		file + ":11: after ### want a quoted regexp, got not-quoted",
		file + `:5: error "floored division by zero" does not match "nope"`,
		file + ":7: unexpected error: floored division by zero",
		file + `:9: expected an error matching "never"`,
	}
	if strings.Join(r.msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(r.msgs, "\n"), strings.Join(want, "\n"))
	}
}

func TestExecSeesBuiltinsAssertAndGlobals(t *testing.T) {
	g := MustExec(t, Options{Globals: starlark.StringDict{"k": starlark.MakeInt(7)}}, `
s = struct(n = k)
assert.eq(s.n, 7)
`)
	if g["s"] == nil {
		t.Fatal("no global s")
	}
	if _, err := Exec(t, Options{}, "assert.fails(lambda: 1 // 0, 'division')\nx = undefined"); err == nil || !strings.Contains(err.Error(), "undefined: undefined") {
		t.Errorf("err = %v, want undefined", err)
	}
}
