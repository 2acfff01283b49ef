package mdsection

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "R.md")
	b, e := Begin("gen"), End("gen")
	os.WriteFile(path, []byte("a\n"+b+"\nold\n"+e+"\nb\n"), 0o644)
	if err := Replace(path, "gen", "new\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "a\n" + b + "\nnew\n" + e + "\nb\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, text := range []string{"no markers\n", e + "\n" + b + "\n", b + "\n", "a\n" + Begin("other") + "\n" + End("other") + "\n"} {
		os.WriteFile(path, []byte(text), 0o644)
		if err := Replace(path, "gen", "x"); err == nil {
			t.Errorf("%q: written, want an error", text)
		}
		if got, _ := os.ReadFile(path); string(got) != text {
			t.Errorf("%q became %q", text, got)
		}
	}
}
