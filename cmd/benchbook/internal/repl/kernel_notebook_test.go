package repl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/benchbook/benchbook/runtime/ipynb"
)

// identifyNotebook names the notebook that holds the cell: by the name
// benchbook convert recorded, else by file name; files that disagree are
// told apart by the frontend's command line, and left unnamed otherwise.
func TestIdentifyNotebook(t *testing.T) {
	dir := t.TempDir()
	write := func(file, name, src string) {
		nb := ipynb.FromPercent([]byte(src))
		if name != "" {
			nb.SetName(name)
		}
		b, _ := ipynb.Marshal(nb)
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Untitled.ipynb", "study", "# %% setup\nx = 1\n")
	write("study.nbconvert.ipynb", "study", "# %% setup\nx = 1\n")
	write("plain.ipynb", "", "# %% a\ny = 1\n")
	write("plain.nbconvert.ipynb", "", "# %% a\ny = 1\n")
	write("broken.ipynb", "../../etc", "# %% b\nz = 1\n")
	for _, c := range []struct {
		code   string
		parent frontendCommand
		want   string
	}{
		{"# %% setup\nx = 1\n\n", frontendCommand{}, "study"},
		{"# %% a\ny = 1", frontendCommand{}, ""},
		{"# %% a\ny = 1", frontendCommand{args: []string{"python3", "/usr/bin/jupyter-nbconvert", "--execute", "plain.ipynb"}, dir: dir}, "plain"},
		{"# %% b\nz = 1", frontendCommand{}, "broken"},
		{"# %% c\nw = 1", frontendCommand{}, ""},
		{"", frontendCommand{}, ""},
	} {
		if got, how := identifyNotebook(dir, c.code, c.parent); got != c.want {
			t.Errorf("%q with parent %v: %q (%s), want %q", c.code, c.parent.args, got, how, c.want)
		}
	}
}
