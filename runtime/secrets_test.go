package runtime

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/record"
)

// leaksIn lists the secrets the record (JSON) or any file under dir holds
// whole.
func leaksIn(t *testing.T, r *nbRun, dir string, secrets ...string) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := record.JSON(&buf, r.e.Record()); err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"record": buf.String()}
	for name, out := range r.outputs {
		texts["outputs of "+name] = out
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Base(p) != "nb.star" {
			b, _ := os.ReadFile(p)
			texts[p] = string(b)
			if _, body, ok := bytes.Cut(b, []byte("\n")); ok && bytes.HasPrefix(b, []byte("benchbook-entry ")) {
				b = body // the checksum line (writeChecked)
			}
			var e entry // an entry's outputs and values are codec bytes, in base64
			if json.Unmarshal(b, &e) == nil {
				for _, o := range e.Outputs {
					texts[p] += "\n" + string(o)
				}
				for _, v := range e.Values {
					texts[p] += "\n" + string(v)
				}
			}
			var m memoEntry // a checkpoint's too
			if json.Unmarshal(b, &m) == nil {
				texts[p] += "\n" + m.Key + "\n" + string(m.Value)
				for _, o := range m.Outputs {
					texts[p] += "\n" + string(o)
				}
			}
		}
		return nil
	})
	var leaks []string
	for what, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				leaks = append(leaks, s+" in "+what)
			}
		}
	}
	return leaks
}

// TestLateSecretRescrubsEarlierEntries: a cell stores a token it does not
// know is one (its name says nothing, no cell's source puts it in a header);
// a later cell's function does, at run time. The earlier cell's entry is
// stored again: its output masked, its value not kept (the cell is live);
// its memo checkpoint, which holds the token too, is removed. Before, the
// entry and the checkpoint kept the token in clear.
func TestLateSecretRescrubsEarlierEntries(t *testing.T) {
	dir := t.TempDir()
	r := runNotebook(t, dir, `# %% early
t = "Rs1" + "late9Token"
print("using", t)
m = memo("one", lambda: "got " + t)

# %% late
def mk(x):
    return {"Authorization": "Bearer " + x}
h = mk(t)
`, Options{})
	if leaks := leaksIn(t, r, dir, "Rs1late9Token", "late9Token"); len(leaks) > 0 {
		t.Errorf("the late secret leaked:\n%s", strings.Join(leaks, "\n"))
	}
	if st := r.e.CellRun("early"); st.Status != StatusLive || !strings.Contains(st.Why, "secret") {
		t.Errorf("early: %s (%s), want live: it holds a secret", st.Status, st.Why)
	}
}

// TestDerivedSecretsMasked: what a notebook makes of a secret with no run
// of it left (reversed, its characters joined, upper-cased) is masked, in
// a variable, printed inline, or as the cell's last value; the rest of
// the output stays.
func TestDerivedSecretsMasked(t *testing.T) {
	dir := t.TempDir()
	r := runNotebook(t, dir, `# %% src
password = "Dv1kQ8zR2w"

# %% use
rev = password[::-1]
print("kept", rev)
print(",".join(password.elems()))
def f(pw):
    print("inside", pw[::-1][:5])
f(password)
password[::-1][1:7]
`, Options{})
	if leaks := leaksIn(t, r, dir, "w2Rz8Qk1vD", "D,v,1,k", "w2Rz8", "2Rz8Qk"); len(leaks) > 0 {
		t.Errorf("a derived secret leaked:\n%s", strings.Join(leaks, "\n"))
	}
	if !strings.Contains(r.outputs["use"], "kept") {
		t.Errorf("too much masked: %q", r.outputs["use"])
	}
}
