package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const defaultsNB = `# %% params
n = param("n", 6)
rate = param("rate", -2.5)
on = param("on", True)
word = param("word", "abab")

# %% use
x = "%d %s %s %s" % (n, rate, on, word)
x
`

// TestParamAtItsDefaultIsTheDefault: a run with -p NAME=<its default> uses
// the entries of the run without it, and the other way round; each run's
// outputs are those of a run from an empty cache with the same -p (the
// oracle), so no value is served for a parameter it was not made with.
func TestParamAtItsDefaultIsTheDefault(t *testing.T) {
	warm := t.TempDir()
	for i, tc := range []struct {
		params map[string]string
		hit    bool
	}{
		{nil, false},
		{map[string]string{"n": "6"}, true},
		{map[string]string{"n": "6", "rate": "-2.50", "on": "true", "word": "abab"}, true},
		{map[string]string{"n": "0x6"}, true},
		{map[string]string{"n": "7"}, false},
		{map[string]string{"word": "ab"}, false},
		{map[string]string{"rate": "-2.5"}, true},
		{map[string]string{"on": "false"}, false},
		{nil, true},
	} {
		got := runNotebook(t, warm, defaultsNB, Options{Params: tc.params})
		want := runNotebook(t, t.TempDir(), defaultsNB, Options{Params: tc.params})
		if got.outputs["use"] != want.outputs["use"] {
			t.Errorf("%d %v: output %q, from an empty cache %q", i, tc.params, got.outputs["use"], want.outputs["use"])
		}
		wantStatus := StatusRan
		if tc.hit {
			wantStatus = StatusHit
		}
		if s := got.status("params"); s != wantStatus {
			t.Errorf("%d %v: params %s, want %s", i, tc.params, s, wantStatus)
		}
	}
}

// TestParamDefaultsThatDisagree: a module that gives a parameter another
// default than the cells is an error naming both (-p n=6 would otherwise be
// keyed as the run without it while the module reads 6, not its 7); two
// cells that disagree, or a default that is not a literal, keep the old rule.
func TestParamDefaultsThatDisagree(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lib.star"), []byte("N = param(\"n\", 7)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runNotebook(t, dir, "# %% a\nn = param(\"n\", 6)\n\n# %% b\nload(\"lib.star\", \"N\")\nm = N\n", Options{})
	if r.status("b") != StatusError || !strings.Contains(r.stderr.String(), "param: n has the default 7 here and 6 in cell a") {
		t.Errorf("b: %s\n%s", r.status("b"), r.stderr.String())
	}
	for _, src := range []string{
		"# %% a\nn = param(\"n\", 6)\n\n# %% b\nm = param(\"n\", 7)\n",
		"# %% a\nk = 6\n\n# %% b\nn = param(\"n\", k)\nm = param(\"n\", 6)\n",
	} {
		cold := t.TempDir()
		runNotebook(t, cold, src, Options{})
		r := runNotebook(t, cold, src, Options{Params: map[string]string{"n": "6"}})
		if r.status("b") != StatusRan {
			t.Errorf("-p n=6 where the defaults disagree: b %s, want ran\n%s", r.status("b"), src)
		}
	}
}
