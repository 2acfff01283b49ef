package ipynb

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// oddNotebooks are percent-format files in every shape the format allows,
// canonical or not.
var oddNotebooks = map[string]string{
	"canonical":                         "# %% [markdown]\n# # Title\n#\n# text\n\n# %% setup\nx = 1\n\n# %%\ny = x + 1\n",
	"preamble":                          "# a comment before any cell\nimport_like = 1\n\n# %% a\nz = 2\n",
	"blank lines before the first cell": "\n\n# %% a\nz = 2\n",
	"no final newline":                  "# %% a\nz = 2",
	"crlf":                              "# %% a\r\nz = 2\r\n\r\n# %% [markdown]\r\n# hi\r\n",
	"two blank lines":                   "# %% a\nz = 2\n\n\n# %% b\nw = z\n",
	"no blank line":                     "# %% a\nz = 2\n# %% b\nw = z\n",
	"markdown without space":            "# %% [markdown]\n#tight\n#  two spaces\n  # indented\n\n# %% a\nz = 1\n",
	"markdown header words":             "# %% [md]\n# short tag\n\n# %% [markdown] notes\n# named\n\n# %% [raw]\n# raw text\n",
	"options":                           "# %% slow cache=false\nimport_time = 1\n\n# %% cache=false\nagain = 2\n",
	"empty cells":                       "# %%\n\n# %% a\nz = 1\n\n# %%\n",
	"unicode and html":                  "# %% [markdown]\n# p99 — <b>bold</b> & µs\n\n# %% a\ns = \"<tag> & ü\"\n",
	"blank lines in code":               "# %% a\ndef f():\n\n    return 1\n\n\nz = f()\n",
	"triple quoted":                     "# %% a\ns = \"\"\"\n# %% not a header? it is one to the splitter\n\"\"\"\n",
	"empty":                             "",
}

// cellsOf is what benchbook reads from a notebook: every cell's name,
// kind, options and text.
func cellsOf(t *testing.T, src []byte) []string {
	t.Helper()
	var out []string
	for _, c := range runtime.SplitCells(src) {
		out = append(out, fmt.Sprintf("%s md=%v opts=%v named=%v %q", c.Name, c.Markdown, c.Options, c.Named, strings.TrimRight(c.Body, "\n")))
	}
	return out
}

func roundTrip(t *testing.T, src []byte) []byte {
	t.Helper()
	b, err := Marshal(FromPercent(src))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := Unmarshal(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return ToPercent(nb)
}

// A .star file converted to ipynb and back is byte for byte the same, in
// every shape: the project's notebooks and the odd ones.
func TestPercentRoundTripIsExact(t *testing.T) {
	files, _ := filepath.Glob("../../notebooks/*.star")
	if len(files) == 0 {
		t.Fatal("no notebooks found")
	}
	srcs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs[filepath.Base(f)] = b
	}
	for name, s := range oddNotebooks {
		srcs[name] = []byte(s)
	}
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			back := roundTrip(t, src)
			if string(back) != string(src) {
				t.Fatalf("round trip changed the file:\nbefore %q\nafter  %q", src, back)
			}
		})
	}
}

// The project's notebooks are in the canonical form: their ipynb carries no
// kept text, only cells as Jupyter shows them.
func TestProjectNotebooksAreCanonical(t *testing.T) {
	files, _ := filepath.Glob("../../notebooks/*.star")
	for _, f := range files {
		src, _ := os.ReadFile(f)
		for _, c := range FromPercent(src).Cells {
			if readMeta(c).Text != "" {
				t.Errorf("%s: cell %s keeps its text: %q", f, c.ID, readMeta(c).Text)
			}
		}
	}
}

// What Jupyter shows of a converted notebook is what benchbook reads: a code
// cell's source has its name and options on its first line, a Markdown
// cell's source is the Markdown.
func TestIpynbCellsAreTheNotebooksCells(t *testing.T) {
	src := []byte(oddNotebooks["canonical"] + "\n# %% slow cache=false\nq = 3\n")
	nb := FromPercent(src)
	var got []string
	for _, c := range nb.Cells {
		got = append(got, c.CellType+" "+c.ID+" "+string(c.Source))
	}
	want := []string{"markdown cell1 # Title\n\ntext", "code setup # %% setup\nx = 1", "code cell3 y = x + 1", "code slow # %% slow cache=false\nq = 3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cells\n got %q\nwant %q", got, want)
	}
}

// A cell edited in Jupyter is written from its new source; the cells left
// alone keep their exact text.
func TestEditedCellIsWrittenAnew(t *testing.T) {
	src := []byte("# %% [markdown]\n#tight\n\n# %% a\nz = 2\n\n\n# %% b\nw = z\n")
	nb := FromPercent(src)
	nb.Cells[0].Source = "tight, and edited\n\nsecond paragraph"
	nb.Cells[2].Source = "# %% b cache=false\nw = z * 2"
	got := string(ToPercent(nb))
	want := "# %% [markdown]\n# tight, and edited\n#\n# second paragraph\n\n# %% a\nz = 2\n\n\n# %% b cache=false\nw = z * 2\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	cells := cellsOf(t, []byte(got))
	if !strings.Contains(cells[0], "second paragraph") || !strings.Contains(cells[2], "opts=map[cache:false]") {
		t.Fatalf("benchbook reads %q", cells)
	}
}

// jupyterLab is a notebook as JupyterLab saves one: sources as strings and
// lists, random ids, outputs and execution counts, unnamed cells, a raw
// cell and the empty cell a notebook ends with.
const jupyterLab = `{
 "cells": [
  {"cell_type": "markdown", "id": "5e0b9c1a-2f4d-4c8e-9a7b-1d2e3f4a5b6c", "metadata": {}, "source": "# Study\n\nWhy it matters."},
  {"cell_type": "code", "execution_count": 3, "id": "a1", "metadata": {"tags": ["x"]}, "outputs": [{"output_type": "stream", "name": "stdout", "text": "hi\n"}], "source": ["x = 1\n", "print(\"hi\")"]},
  {"cell_type": "code", "execution_count": null, "id": "a2", "metadata": {}, "outputs": [], "source": ["# %% total\n", "y = x + 1"]},
  {"cell_type": "raw", "id": "r", "metadata": {}, "source": "raw words"},
  {"cell_type": "code", "execution_count": null, "id": "end", "metadata": {}, "outputs": [], "source": ""}
 ],
 "metadata": {"kernelspec": {"display_name": "benchbook", "language": "starlark", "name": "benchbook"}},
 "nbformat": 4,
 "nbformat_minor": 5
}`

// An ipynb made in Jupyter becomes a notebook benchbook runs, and back:
// every non-empty cell, its kind and its text survive.
func TestIpynbRoundTripKeepsCells(t *testing.T) {
	nb, err := Unmarshal([]byte(jupyterLab))
	if err != nil {
		t.Fatal(err)
	}
	star := ToPercent(nb)
	if _, err := runtime.Parse("study.star", star); err != nil {
		t.Fatalf("the converted notebook does not parse: %v\n%s", err, star)
	}
	wantStar := "# %% [markdown]\n# # Study\n#\n# Why it matters.\n\n# %%\nx = 1\nprint(\"hi\")\n\n# %% total\ny = x + 1\n\n# %% [raw]\n# raw words\n"
	if string(star) != wantStar {
		t.Fatalf("star\n got %q\nwant %q", star, wantStar)
	}
	back := FromPercent(star)
	var before, after []string
	for _, c := range nb.Cells {
		if c.Source != "" {
			before = append(before, c.CellType+": "+string(c.Source))
		}
	}
	for _, c := range back.Cells {
		after = append(after, c.CellType+": "+string(c.Source))
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("cells changed:\nbefore %q\nafter  %q", before, after)
	}
}

func TestUnmarshalRefusesOtherFormats(t *testing.T) {
	for _, bad := range []string{`{"nbformat": 3, "cells": []}`, `[1]`, `{"nbformat": 4, "cells": [{"cell_type": "weird", "source": ""}]}`} {
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// nbformat's own validator (Debian's python3-nbformat) accepts every
// notebook FromPercent writes.
func TestNbformatValidates(t *testing.T) {
	py := needs.PythonModules(t, "python3-nbformat", "nbformat")
	dir := t.TempDir()
	files, _ := filepath.Glob("../../notebooks/*.star")
	var paths []string
	write := func(name string, src []byte) {
		b, err := Marshal(FromPercent(src))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, strings.NewReplacer(" ", "_", ".star", "").Replace(name)+".ipynb")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, f := range files {
		src, _ := os.ReadFile(f)
		write(filepath.Base(f), src)
	}
	for name, src := range oddNotebooks {
		write(name, []byte(src))
	}
	script := `import json, sys, nbformat
for p in sys.argv[1:]:
    nb = nbformat.read(p, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    assert nb.nbformat == 4 and nb.nbformat_minor == 5, p
print(json.dumps(len(sys.argv) - 1))`
	out, err := exec.Command(py, append([]string{"-c", script}, paths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("nbformat refused a notebook: %v\n%s", err, out)
	}
	var n int
	if json.Unmarshal(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:], &n); n != len(paths) {
		t.Fatalf("validated %s, want %d", out, len(paths))
	}
}

// ranByKernel is a notebook JupyterLab saved after the benchbook kernel ran
// it: a1 and c4 unnamed, so the kernel named them by their ids (their
// status line's metadata says so); total named by its header; b3 run by
// a client that sent no id (REPL input: no benchbook metadata); d5 never
// run; e6's output names another cell.
const ranByKernel = `{
 "cells": [
  {"cell_type": "code", "execution_count": 1, "id": "a1", "metadata": {}, "source": "x = 1",
   "outputs": [{"output_type": "display_data", "data": {"text/plain": "ran a1 in 1ms"}, "metadata": {"benchbook": {"cell": "a1", "status": "ran"}}}]},
  {"cell_type": "code", "execution_count": 2, "id": "a2", "metadata": {}, "source": "# %% total\ny = x + 1",
   "outputs": [{"output_type": "display_data", "data": {"text/plain": "ran total in 1ms"}, "metadata": {"benchbook": {"cell": "total", "status": "ran"}}}]},
  {"cell_type": "code", "execution_count": 3, "id": "b3", "metadata": {}, "source": "y * 2",
   "outputs": [{"output_type": "execute_result", "execution_count": 3, "data": {"text/plain": "4"}, "metadata": {}}]},
  {"cell_type": "code", "execution_count": 4, "id": "c4", "metadata": {}, "source": "# %% cache=false\nz = y + 1",
   "outputs": [{"output_type": "display_data", "data": {"text/plain": "ran c4 in 1ms"}, "metadata": {"benchbook": {"cell": "c4", "status": "ran"}}}]},
  {"cell_type": "code", "execution_count": null, "id": "d5", "metadata": {}, "source": "w = 5", "outputs": []},
  {"cell_type": "code", "execution_count": 5, "id": "e6", "metadata": {}, "source": "v = 6",
   "outputs": [{"output_type": "display_data", "data": {"text/plain": "ran a1 in 1ms"}, "metadata": {"benchbook": {"cell": "a1", "status": "ran"}}}]}
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}`

// An unnamed cell the kernel ran under its id is written "# %% ID", so
// benchbook names it as the kernel did and the id survives the trip back
// to .ipynb; the other unnamed cells stay bare and lose their ids.
func TestKernelNamedCellsKeepTheirIDs(t *testing.T) {
	nb, err := Unmarshal([]byte(ranByKernel))
	if err != nil {
		t.Fatal(err)
	}
	star := ToPercent(nb)
	want := "# %% a1\nx = 1\n\n# %% total\ny = x + 1\n\n# %%\ny * 2\n\n# %% c4 cache=false\nz = y + 1\n\n# %%\nw = 5\n\n# %%\nv = 6\n"
	if string(star) != want {
		t.Fatalf("star\n got %q\nwant %q", star, want)
	}
	var names []string
	for _, c := range runtime.SplitCells(star) {
		names = append(names, fmt.Sprintf("%s named=%v opts=%v", c.Name, c.Named, c.Options))
	}
	if names[0] != "a1 named=true opts=map[]" || names[3] != "c4 named=true opts=map[cache:false]" {
		t.Errorf("benchbook reads the cells as %q", names)
	}
	var ids []string
	for _, c := range FromPercent(star).Cells {
		ids = append(ids, c.ID)
	}
	if want := []string{"a1", "total", "cell3", "c4", "cell5", "cell6"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids back in .ipynb %q, want %q", ids, want)
	}
}
