package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadOfLoadInKey: a cell loads h1.star, which loads h2.star; every
// edit of either (and of a third level) shows in a warm run what a run on
// an empty cache shows. Before, the key hashed direct loads only: editing
// h2.star left the cell a hit showing 42 where a fresh run showed 100.
func TestLoadOfLoadInKey(t *testing.T) {
	nb := "# %% a\nload(\"h1.star\", \"f\")\nv = f()\nv\n"
	write := func(dir string, files map[string]string) {
		for name, src := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	h1 := "load(\"h2.star\", \"g\")\ndef f():\n    return g()\n"
	edits := []map[string]string{
		{"h1.star": h1, "h2.star": "load(\"h3.star\", \"k\")\ndef g():\n    return 40 + k\n", "h3.star": "k = 2\n"},
		{"h2.star": "load(\"h3.star\", \"k\")\ndef g():\n    return 100\n"},
		{"h3.star": "k = 5\n", "h2.star": "load(\"h3.star\", \"k\")\ndef g():\n    return 40 + k\n"},
		{"h1.star": "load(\"h2.star\", \"g\")\ndef f():\n    return g() * 2\n"},
	}
	warm := t.TempDir()
	all := map[string]string{}
	for i, ed := range edits {
		write(warm, ed)
		for k, v := range ed {
			all[k] = v
		}
		cold := t.TempDir()
		write(cold, all)
		want := runNotebook(t, cold, nb, Options{}).outputs["a"]
		got := runNotebook(t, warm, nb, Options{})
		if got.outputs["a"] != want {
			t.Fatalf("edit %d: warm cache shows %q (%s), empty cache %q", i, got.outputs["a"], got.status("a"), want)
		}
		if i > 0 && got.status("a") != StatusRan {
			t.Errorf("edit %d: a is %s, want ran", i, got.status("a"))
		}
	}
	if again := runNotebook(t, warm, nb, Options{}); again.status("a") != StatusHit {
		t.Errorf("unchanged modules: a is %s (%s), want a hit", again.status("a"), again.e.CellRun("a").Why)
	}
}

// TestEditedModuleReloadedInSession: in one session (the REPL, watch), a
// module edited between two runs of a cell is loaded again: the key holds
// the new source, so running the old one would store its value under it.
func TestEditedModuleReloadedInSession(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "h1.star"), []byte("load(\"h2.star\", \"g\")\nf = g\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "h2.star"), []byte("def g():\n    return 42\n"), 0o644)
	path := filepath.Join(dir, "nb.star")
	os.WriteFile(path, []byte("# %% a\nload(\"h1.star\", \"f\")\nv = f()\nv\n"), 0o644)
	nb, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), nb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Run(true)
	os.WriteFile(filepath.Join(dir, "h2.star"), []byte("def g():\n    return 100\n"), 0o644)
	if _, err := e.Reload(nb); err != nil {
		t.Fatal(err)
	}
	e.Run(true)
	st := e.CellRun("a")
	if len(st.outputs) != 1 || st.outputs[0].String() != "100" {
		t.Errorf("after the edit, in the same session: %v (%s)", st.outputs, st.Why)
	}
}

// TestDeepChainInModuleRefused: a loaded module is bounded like a cell.
func TestDeepChainInModuleRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "deep.star"), []byte("x = [0]\ny = x"+strings.Repeat("[0]", 1_000_000)+"\n"), 0o644)
	r := runNotebook(t, dir, "# %% a\nload(\"deep.star\", \"y\")\nz = y\n", Options{})
	st := r.e.CellRun("a")
	if st.Status != StatusError || !strings.Contains(st.Err.Error(), "excessive nesting") {
		t.Errorf("a: %s %v", st.Status, st.Err)
	}
}
