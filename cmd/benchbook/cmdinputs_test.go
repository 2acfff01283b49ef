package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cmdInputsNB starts ./srvbin and shows what it says, and runs two scripts
// given as arguments, each printing its own version into a file the cell
// then shows: what a cell measured depends on each of these files.
const cmdInputsNB = `# %% srv
p = backend.process(["./srvbin"], ready = "log:^ready")

# %% says
said = p.logs(tail = 1)
said

# %% py
r1 = workload.exec(["python3", "bench.py"], runs = 1, warmup = 0)
py = file("py.out")
py

# %% sh
r2 = workload.exec("/bin/sh ./script.sh", runs = 1, warmup = 0)
sh = file("sh.out")
sh
`

// runIn runs the benchbook binary in dir (where ./srvbin and bench.py
// resolve, as for a user who runs benchbook beside the notebook).
func runIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cliBinary(t), args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchbook %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// shown is a cell's output in the Markdown record.
func shown(t *testing.T, dir string) string {
	t.Helper()
	runIn(t, dir, "render", "-format", "md", "nb.star")
	md, err := os.ReadFile(filepath.Join(dir, "nb.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Only the outputs: provenance lists the inputs' hashes, which differ.
	var keep []string
	for _, l := range strings.Split(string(md), "\n") {
		if strings.Contains(l, "version ") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, "\n")
}

// TestCommandFilesAreInputs: replacing the binary backend.process starts,
// or editing a script that workload.exec is given as an argument (python3
// bench.py; "/bin/sh ./script.sh"), shows in a warm run what a run on an
// empty cache shows. Before, only a program given as the first word was
// an input: the cells stayed hits with the old versions' outputs.
func TestCommandFilesAreInputs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	files := func(v string) map[string]string {
		return map[string]string{
			"srvbin":    "#!/bin/sh\necho ready srvbin version " + v + "\nexec sleep 600\n",
			"bench.py":  "open('py.out', 'w').write('bench.py version " + v + "')\n",
			"script.sh": "echo script.sh version " + v + " > sh.out\n",
		}
	}
	write := func(dir string, f map[string]string) {
		for name, src := range f {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(dir, "nb.star"), []byte(cmdInputsNB), 0o644)
	}
	warm := t.TempDir()
	write(warm, files("1"))
	runIn(t, warm, "run", "-no-color", "nb.star")
	for i, edit := range []string{"srvbin", "bench.py", "script.sh"} {
		now := files("1")
		for _, e := range []string{"srvbin", "bench.py", "script.sh"}[:i+1] {
			now[e] = files("2")[e]
		}
		os.WriteFile(filepath.Join(warm, edit), []byte(now[edit]), 0o755)
		out := runIn(t, warm, "run", "-no-color", "nb.star")
		cold := t.TempDir()
		write(cold, now)
		runIn(t, cold, "run", "-no-color", "nb.star")
		if got, want := shown(t, warm), shown(t, cold); got != want {
			t.Errorf("after editing %s, the warm cache shows\n%s\nan empty cache\n%s\n%s", edit, got, want, out)
		}
	}
	// Unchanged: every cell is a hit (or live), no input reported changed.
	out := runIn(t, warm, "run", "-no-color", "nb.star")
	if strings.Contains(out, "input changed") || !regexp.MustCompile(`(?m)^\s*hit\s+sh\b`).MatchString(out) {
		t.Errorf("a run with nothing changed:\n%s", out)
	}
}

// TestProgramOnPathIsAnInput: a command named without a slash runs what
// PATH finds; two directories each hold a relbench, and switching PATH
// from one to the other shows in a warm run what a run on an empty cache
// shows. Before, the input was the path found when the cell ran, whose
// file had not changed: the cell stayed a hit with the other program's
// output.
func TestProgramOnPathIsAnInput(t *testing.T) {
	t.Parallel()
	bins := t.TempDir()
	for _, v := range []string{"1", "2"} {
		dir := filepath.Join(bins, "bin"+v)
		os.MkdirAll(dir, 0o755)
		script := "#!/bin/sh\necho relbench version " + v + " > rel.out\n"
		if err := os.WriteFile(filepath.Join(dir, "relbench"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const nb = "# %% rel\nr = workload.exec([\"relbench\"], runs = 1, warmup = 0)\nrel = file(\"rel.out\")\nrel\n"
	pathWith := func(first string) string {
		return filepath.Join(bins, first) + string(os.PathListSeparator) + filepath.Join(bins, map[string]string{"bin1": "bin2", "bin2": "bin1"}[first]) +
			string(os.PathListSeparator) + os.Getenv("PATH")
	}
	runWith := func(dir, path string) string {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "nb.star"), []byte(nb), 0o644)
		cmd := exec.Command(cliBinary(t), "run", "-no-color", "-format", "md", "nb.star")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "PATH="+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("benchbook run: %v\n%s", err, out)
		}
		md, err := os.ReadFile(filepath.Join(dir, "nb.md"))
		if err != nil {
			t.Fatal(err)
		}
		return regexp.MustCompile(`relbench version \d`).FindString(string(md))
	}
	warm := t.TempDir()
	for i, first := range []string{"bin1", "bin2", "bin1"} {
		got, want := runWith(warm, pathWith(first)), runWith(t.TempDir(), pathWith(first))
		if got != want || want == "" {
			t.Errorf("step %d, PATH starting at %s: the warm cache shows %q, an empty cache %q", i, first, got, want)
		}
	}
}
