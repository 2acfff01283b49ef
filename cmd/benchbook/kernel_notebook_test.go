package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/ipynb"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// withoutSessionName is env less JPY_SESSION_NAME: what Debian's nbconvert,
// nbclient and the classic Notebook give a kernel.
func withoutSessionName(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "JPY_SESSION_NAME=") })
}

// nbconvert runs "jupyter nbconvert --to notebook --execute" on nb, as a
// user does, and returns the executed notebook it wrote beside it.
func nbconvert(t *testing.T, env []string, nb string) *ipynb.Notebook {
	t.Helper()
	needs.PythonModules(t, jupyterPackages, "nbclient")
	bin, err := exec.LookPath("jupyter-nbconvert")
	if err != nil {
		needs.Missing(t, "jupyter-nbconvert", "apt-get install jupyter-nbconvert")
	}
	cmd := exec.Command(bin, "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=240", filepath.Base(nb))
	cmd.Dir, cmd.Env = filepath.Dir(nb), env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nbconvert %s: %v\n%s", nb, err, out)
	}
	src, err := os.ReadFile(strings.TrimSuffix(nb, ".ipynb") + ".nbconvert.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	out, err := ipynb.Unmarshal(src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// outcomes are the cells' outcome lines in an executed notebook: the first
// line of each code cell's first output (its text, or its status display).
func outcomes(nb *ipynb.Notebook) map[string]string {
	got := map[string]string{}
	for _, c := range nb.Cells {
		if c.CellType != "code" || c.Outputs == nil || len(*c.Outputs) == 0 {
			continue
		}
		out, _ := (*c.Outputs)[0].(map[string]any)
		text := multiline(out["text"])
		if data, ok := out["data"].(map[string]any); ok {
			text = multiline(data["text/plain"])
		}
		line, _, _ := strings.Cut(text, "\n")
		if f := strings.Fields(line); len(f) >= 2 {
			got[strings.TrimSuffix(f[1], ":")] = line
		}
	}
	return got
}

// multiline is nbformat's text: a string or a list of lines.
func multiline(v any) string {
	if lines, ok := v.([]any); ok {
		var b strings.Builder
		for _, l := range lines {
			s, _ := l.(string)
			b.WriteString(s)
		}
		return b.String()
	}
	s, _ := v.(string)
	return s
}

var quickstartCells = []string{"params", "runs", "compare", "charts", "data", "decision"}

// nbconvert, which tells the kernel no notebook name, then benchbook run of
// the .star: every cell a hit, the kernel having cached the notebook's
// cells where benchbook run looks (.benchbook/quickstart, found from the
// .ipynb that holds the first cell sent). And the reverse, with the .ipynb
// renamed: the name benchbook convert recorded in it leads the kernel to
// the run's cache, so every cell is a hit there too.
func TestKernelNbconvertSharesTheCache(t *testing.T) {
	params := []string{"-p", "duration=1s", "-p", "pairs=2", "-p", "rows=2000"}
	env := withoutSessionName(installKernel(t, params...))

	t.Run("nbconvert then run", func(t *testing.T) {
		dir := t.TempDir()
		star, _ := copyQuickstart(t, dir)
		if code, _, stderr := runCLI(t, "convert", star); code != 0 {
			t.Fatalf("convert: %s", stderr)
		}
		first := outcomes(nbconvert(t, env, filepath.Join(dir, "quickstart.ipynb")))
		if !strings.HasPrefix(first["runs"], "ran runs in ") {
			t.Fatalf("nbconvert: runs is %q, want ran (outcomes %v)", first["runs"], first)
		}
		code, _, stderr := runCLI(t, append([]string{"run", "-no-color"}, append(params, star)...)...)
		if code != 0 {
			t.Fatalf("benchbook run: exit %d\n%s", code, stderr)
		}
		for _, cell := range quickstartCells {
			if !progressSays(stderr, cell, "hit") {
				t.Errorf("benchbook run after nbconvert: %s is not a hit\n%s", cell, stderr)
			}
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, ".benchbook")); len(entries) != 1 {
			t.Errorf(".benchbook holds %v, want the one cache both used", entries)
		}
	})

	t.Run("run then nbconvert", func(t *testing.T) {
		dir := t.TempDir()
		star, _ := copyQuickstart(t, dir)
		if code, _, stderr := runCLI(t, append([]string{"run", "-no-color"}, append(params, star)...)...); code != 0 {
			t.Fatalf("benchbook run: exit %d\n%s", code, stderr)
		}
		nb := filepath.Join(dir, "Untitled copy.ipynb") // wherever it goes, it knows its name
		if code, _, stderr := runCLI(t, "convert", "-o", nb, star); code != 0 {
			t.Fatalf("convert: %s", stderr)
		}
		got := outcomes(nbconvert(t, env, nb))
		for _, cell := range quickstartCells {
			if line := got[cell]; !regexp.MustCompile(`^(hit|live) `+cell+`\b`).MatchString(line) || strings.HasPrefix(line, "live "+cell+" in ") {
				t.Errorf("nbconvert after benchbook run: %s is %q, want a hit", cell, line)
			}
		}
	})
}

// kernelReply is what kernels.py saw of one input.
type kernelReply struct {
	Status  *string
	Seconds *float64
	Error   string
}

// Kernels in one folder, none told its notebook (two notebooks open in the
// classic Notebook, two nbconverts): each answers at once, REPL input as
// cells, whatever the others hold; a cell of a.ipynb is cached in
// .benchbook/a, and cells no file holds in .benchbook/kernel, or kernel-2
// when another kernel holds that: two notebooks never share a cache.
func TestKernelsInOneFolder(t *testing.T) {
	dir := t.TempDir()
	env := withoutSessionName(installKernel(t))
	a := ipynb.FromPercent([]byte("# %% one\nx = 1\n"))
	b, _ := ipynb.Marshal(a)
	if err := os.WriteFile(filepath.Join(dir, "a.ipynb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := [][]string{
		{"1 + 1", "# %% one\nx = 1", "1 + 1"},
		{"1 + 1", "# %% mine\ny = 2", "1 + 1"},
		{"1 + 1", "# %% theirs\nz = 3", "1 + 1"},
	}
	raw, _ := json.Marshal(inputs)
	path := filepath.Join(t.TempDir(), "inputs.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runPython(t, env, dir, 3*time.Minute, "kernels.py", path)
	if err != nil {
		t.Fatalf("kernels.py: %v\n%s", err, out)
	}
	var got [][]kernelReply
	if err := json.Unmarshal([]byte(lastLines(out, 1)), &got); err != nil || len(got) != len(inputs) {
		t.Fatalf("%v\n%s", err, out)
	}
	for k, replies := range got {
		for i, r := range replies {
			switch {
			case r.Status == nil:
				t.Errorf("kernel %d, %q: %s", k+1, inputs[k][i], r.Error)
			case *r.Status != "ok":
				t.Errorf("kernel %d, %q: %s %s", k+1, inputs[k][i], *r.Status, r.Error)
			case *r.Seconds > 1:
				t.Errorf("kernel %d, %q: answered in %.2fs, want within 1s", k+1, inputs[k][i], *r.Seconds)
			default:
				t.Logf("kernel %d, %q: %.3fs", k+1, inputs[k][i], *r.Seconds)
			}
		}
	}
	for _, cache := range []string{"a", "kernel", "kernel-2"} {
		entries, _ := os.ReadDir(filepath.Join(dir, ".benchbook", cache))
		if len(entries) < 2 { // the lock and the cell's entries
			t.Errorf(".benchbook/%s holds %d files, want the cache of one kernel's cells", cache, len(entries))
		}
	}
}
