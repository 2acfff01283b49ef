package record_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/record"
)

// TestMarkdownFilesReadable: the .md and its SVGs are for others to read
// (a PR, a web server): 0644 like any file the user writes, not 0600.
func TestMarkdownFilesReadable(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "nb.md")
	if err := record.Markdown(synthetic(), md); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "nb_files", "*"))
	files = append(files, md)
	if len(files) < 2 {
		t.Fatalf("no figure written: %v", files)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s is %v, want -rw-r--r--", filepath.Base(f), st.Mode().Perm())
		}
	}
}

// TestMarkdownDataWhole: a value's downloads are written whole beside the
// Markdown and linked; the Markdown itself shows only a preview.
func TestMarkdownDataWhole(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "nb.md")
	if err := record.Markdown(synthetic(), md); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(md)
	const link = "](nb_files/runs-2-runs.csv)"
	if !strings.Contains(string(text), link) {
		t.Fatalf("no link %q in\n%s", link, text)
	}
	data, err := os.ReadFile(filepath.Join(dir, "nb_files", "runs-2-runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "pair,arm,rps\n1,A,10000\n1,B,12000\n"; string(data) != want {
		t.Errorf("data file = %q, want %q", data, want)
	}
}

// TestTitleCodeSpans: `code` in the notebook's heading shows as code in
// both records, not as escaped backticks.
func TestTitleCodeSpans(t *testing.T) {
	r := synthetic()
	r.Title = "Does `idx_a <b>` make `*search*` cheaper?"
	path := filepath.Join(t.TempDir(), "nb.md")
	if err := record.Markdown(r, path); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	if first, _, _ := strings.Cut(string(text), "\n"); first != "# Does `idx_a <b>` make `*search*` cheaper?" {
		t.Errorf("markdown title line = %q", first)
	}
	page := renderHTML(t, r)
	if !strings.Contains(page, "<h1>Does <code>idx_a &lt;b&gt;</code> make <code>*search*</code> cheaper?</h1>") {
		t.Errorf("html title not rendered with code spans:\n%s", page[:min(len(page), 2000)])
	}
	if !strings.Contains(page, "<title>Does idx_a &lt;b&gt; make *search* cheaper?</title>") {
		t.Error("the browser title keeps backticks")
	}
}

// TestTargetsInProvenance: "server" inputs (what each target runs: a
// container's image, a process's binary, a server's version and settings)
// show in a targets table, once each with the cells that named them, not
// in the inputs table; two targets are two rows (issue 52: two containers
// were one "server" line).
func TestTargetsInProvenance(t *testing.T) {
	r := synthetic()
	srv := record.Input{Kind: "server", Name: "cluster-1: PostgreSQL 15.8; non-default: shared_buffers=128MB"}
	a := record.Input{Kind: "server", Name: "container: image svc:current sha256:aa; ready http://127.0.0.1:18081/"}
	b := record.Input{Kind: "server", Name: "container: image svc:candidate sha256:bb; ready http://127.0.0.1:18082/"}
	r.Cells[1].Inputs = append(r.Cells[1].Inputs, srv, a, b)
	r.Cells[2].Inputs = append(r.Cells[2].Inputs, srv)
	page := renderHTML(t, r)
	c1, c2 := r.Cells[1].Name, r.Cells[2].Name
	for what, cells := range map[string]string{srv.Name: c1 + ", " + c2, a.Name: c1, b.Name: c1} {
		if n := strings.Count(page, "<tr><td>"+what+"</td><td>"+cells+"</td></tr>"); n != 1 {
			t.Errorf("target row %q (cells %s) shown %d times, want once", what, cells, n)
		}
	}
	if strings.Contains(page, "<td>server</td>") {
		t.Error("a target is also in the inputs table")
	}
	path := filepath.Join(t.TempDir(), "nb.md")
	if err := record.Markdown(r, path); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(path)
	if !strings.Contains(string(md), "| cluster-1: PostgreSQL 15.8; non-default: shared\\_buffers=128MB | "+c1+", "+c2+" |") ||
		!strings.Contains(string(md), "| container: image svc:candidate sha256:bb; ready http://127.0.0.1:18082/ | "+c1+" |") {
		t.Errorf("markdown provenance lacks the targets:\n%s", md)
	}
}
