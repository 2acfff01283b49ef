package backendtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/record"
)

// word is the secret the redaction notebook makes at run time, from pieces
// (so no cell's source holds it), under a name that says nothing: only
// what the handle's builtin learns of its spec can hide it.
const word = "bbSekret4711xq"

// testRedaction runs a notebook that starts a handle with word in its spec
// and shows the handle, its string attributes and what k.Show gives, and a
// cell that fails with word in its spec; word must reach neither the
// record (HTML, Markdown, JSON), nor the cache's entries, nor the cell's
// error, nor the progress lines.
func testRedaction(t *testing.T, k Kind) {
	if k.Secret == "" {
		t.Skipf("a %s's spec holds no secret (the Kind gives no Secret)", k.Name)
	}
	show := "[]"
	if k.Show != "" {
		show = "[str(" + k.Show + ")]"
	}
	src := `# %% secret
WORD = "".join(["bbSek", "ret47", "11xq"])
` + vars(t, k) + k.Secret + `
shown = [str(h)] + [str(getattr(h, a)) for a in dir(h) if type(getattr(h, a)) == "string"] + ` + show + `
shown
`
	if k.Fail != "" {
		src += "\n# %% fail\n" + k.Fail + "\n"
	}
	n := runSource(t, k, src)
	if shown := n.value("secret", "shown"); !strings.Contains(shown, "<"+k.Name) {
		t.Errorf("the handle was not shown: %s", shown)
	}
	if k.Fail != "" {
		st := n.e.CellRun("fail")
		if st.Err == nil {
			t.Fatalf("Fail (%s) did not fail", k.Fail)
		}
		if strings.Contains(st.Err.Error(), word) {
			t.Errorf("the error of a failed start holds the secret: %v", st.Err)
		}
		t.Logf("fail: %v", st.Err)
	}
	if strings.Contains(n.stderr, word) {
		t.Errorf("the progress lines hold the secret:\n%s", n.stderr)
	}
	r := n.e.Record()
	var html, js bytes.Buffer
	if err := record.HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if err := record.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(t.TempDir(), "nb.md")
	if err := record.Markdown(r, md); err != nil {
		t.Fatal(err)
	}
	mdText, _ := os.ReadFile(md)
	for name, text := range map[string][]byte{"HTML": html.Bytes(), "JSON": js.Bytes(), "Markdown": mdText} {
		if bytes.Contains(text, []byte(word)) {
			t.Errorf("the %s record holds the secret", name)
		}
	}
	cacheHolds(t, n.e.CacheDir())
}

// cacheHolds fails t for every file of the cache, its resources' data
// aside (a server's own files), that holds word.
func cacheHolds(t *testing.T, dir string) {
	t.Helper()
	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "resources" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		files++
		if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(word)) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if files == 0 {
		t.Errorf("no cache files under %s: nothing was checked", dir)
	}
}
