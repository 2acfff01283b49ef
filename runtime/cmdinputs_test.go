package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// TestCommandInputsRule: which arguments of a command are inputs, as the
// cache guide (docs/guides/cache.md) states it.
func TestCommandInputsRule(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"bench.py": 10, "conf.yaml": 10, "big.bin": 3000, "prog": 10} {
		os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o755)
	}
	os.MkdirAll(filepath.Join(dir, ".benchbook", "nb"), 0o755)
	os.WriteFile(filepath.Join(dir, ".benchbook", "nb", "data"), []byte("x"), 0o644)
	t.Setenv("BENCHBOOK_MAX_FILE", "2K")
	th := &starlark.Thread{}
	kinds := func(argv ...string) map[string]string {
		out := map[string]string{}
		for _, in := range CommandInputs(th, argv, dir) {
			out[strings.TrimPrefix(in.Name, dir+"/")] = in.Kind
		}
		return out
	}
	got := kinds("./prog", "bench.py", "--config=conf.yaml", "big.bin", "out.txt", "/proc/self/status", ".benchbook/nb/data", dir)
	want := map[string]string{"prog": "binary", "bench.py": "file", "conf.yaml": "file", "big.bin": "file-stat"}
	if len(got) != len(want) {
		t.Errorf("inputs %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// A name without a slash: the path PATH finds is an input too.
	onPath := CommandInputs(th, []string{"sh", "-c", "true"}, dir)
	if len(onPath) < 2 || onPath[0] != (Input{Kind: "program", Name: "sh", Hash: onPath[1].Name}) || onPath[1].Kind != "binary" {
		t.Errorf("a program named without a slash: %v", onPath)
	}
	sh := kinds("/bin/sh", "-c", "./prog bench.py > $OUT; cat 'conf.yaml'")
	if sh["prog"] != "binary" || sh["bench.py"] != "file" || sh["conf.yaml"] != "" || sh["/bin/sh"] != "binary" {
		t.Errorf("a shell command: %v", sh)
	}
}

// TestFileHashMemo: a file hashed again with the same identity is not read
// again, and an edit is seen even at the same size within the same second
// (its change time moves), as is a file replaced by another.
func TestFileHashMemo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bin")
	os.WriteFile(p, []byte("version 1"), 0o755)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	time.Sleep(1100 * time.Millisecond) // past the racy second of its change time
	h1, err := FileSHA256(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := hashMemo.Load(p); !ok {
		t.Errorf("a file unchanged for an hour is not remembered")
	}
	os.WriteFile(p, []byte("version 2"), 0o755) // same size
	os.Chtimes(p, old, old)                     // and the same mtime: the change time still moves
	if h2, _ := FileSHA256(p); h2 == h1 {
		t.Errorf("an edit at the same size and mtime went unseen")
	}
	os.Remove(p)
	os.WriteFile(p, []byte("version 1"), 0o755)
	if h3, _ := FileSHA256(p); h3 != h1 {
		t.Errorf("the same content again hashes %s, was %s", h3, h1)
	}
}

// TestFileRefusesTheCache: file() of anything in a benchbook cache (a
// cluster's data, a snapshot, an entry) is refused: what a server wrote
// there (pg_stat_statements keeps CREATE ROLE ... PASSWORD) would reach
// the record.
func TestFileRefusesTheCache(t *testing.T) {
	dir := t.TempDir()
	r := runNotebook(t, dir, "# %% a\nx = 1\n", Options{})
	os.Symlink(filepath.Join(r.e.store.dir, "salt"), filepath.Join(dir, "link"))
	for _, p := range []string{".benchbook/nb/v1/salt", "link"} {
		r = runNotebook(t, dir, "# %% a\nx = file(\""+p+"\")\n", Options{})
		if st := r.e.CellRun("a"); st.Status != StatusError || !strings.Contains(st.Err.Error(), "inside benchbook's cache") {
			t.Errorf("file(%q): %s %v", p, st.Status, st.Err)
		}
	}
}
