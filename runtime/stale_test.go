package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// Each case edits an input between runs; the warm run must show what a run
// on an empty cache shows.
func TestDynamicInputsReachKeys(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		cell      string // whose output is compared
	}{
		{"live cell's file reaches dependents", "# %% setup\nfactor = int(file(\"in.txt\"))\ndef scaled(x):\n    return x * factor\n\n# %% use\ny = scaled(2)\ny\n", "use"},
		{"file read before memo", "# %% a\ndata = file(\"in.txt\")\nr = memo(\"k\", lambda: len(data))\nr\n", "a"},
		{"file read inside memo", "# %% a\nr = memo(\"k\", lambda: len(file(\"in.txt\")))\nr\n", "a"},
		{"file read inside memo, cell not cached", "# %% a cache=false\nr = memo(\"k\", lambda: len(file(\"in.txt\")))\nr\n", "a"},
		{"prints inside memo", "# %% a\nprint(\"before\")\ndef _f():\n    print(\"inside\", len(file(\"in.txt\")))\n    return 1\nr = memo(\"k\", _f)\nprint(\"after\")\n", "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			warm := t.TempDir()
			for i, content := range []string{"2", "3", "2", "44"} {
				os.WriteFile(filepath.Join(warm, "in.txt"), []byte(content), 0o644)
				cold := t.TempDir()
				os.WriteFile(filepath.Join(cold, "in.txt"), []byte(content), 0o644)
				want := runNotebook(t, cold, tc.src, Options{}).outputs[tc.cell]
				got := runNotebook(t, warm, tc.src, Options{})
				if got.outputs[tc.cell] != want {
					t.Fatalf("edit %d (in.txt = %q): warm cache shows %q, empty cache %q\n%s", i, content, got.outputs[tc.cell], want, got.stderr.String())
				}
			}
		})
	}
}

// A checkpoint comes back with what its function printed and met, so a
// resumed cell's record and entry are those of a whole run.
func TestMemoReplaysOutputsAndInputs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.txt"), []byte("abc"), 0o644)
	src := "# %% a cache=false\ndef _f():\n    print(\"measured\", len(file(\"in.txt\")))\n    return 1\nr = memo(\"k\", _f)\nr\n"
	first := runNotebook(t, dir, src, Options{})
	second := runNotebook(t, dir, src, Options{})
	if second.outputs["a"] != first.outputs["a"] {
		t.Errorf("outputs: first %q, from the checkpoint %q", first.outputs["a"], second.outputs["a"])
	}
	if got := second.e.CellRun("a").inputs; len(got) != 1 || got[0].Kind != "file" {
		t.Errorf("inputs from the checkpoint: %v", got)
	}
}
