package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/testsupport/startest"
	"github.com/benchbook/benchbook/stdlib"
)

// TestHelpPrintsTheReference: benchbook help NAME prints a builtin's entry
// (its signature first), a module's or stdlib design's page, or a
// command's flags; a name that is none of these is a usage error that
// says which names are near. (help printed the usage alone, whatever NAME.)
func TestHelpPrintsTheReference(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"workload.http"}, []string{"workload.http(url, method = \"GET\", headers = {}", "rate must be > 0, got -5", "clients = 4"}},
		{[]string{"workload"}, []string{"workload.exec(cmd, runs = 10", "Run attributes", "gen_cpu_us_per_req"}},
		{[]string{"abab"}, []string{"abab(arms, run, pairs = 6, order = \"rotate\"", "load(\"@std/abab.star\", \"abab\")"}},
		{[]string{"@std/soak.star"}, []string{"median_halves(metric, within_pct, better)"}},
		{[]string{"json.encode"}, []string{"json.encode(x) -> str"}},
		{[]string{"http"}, []string{"http.get(url, headers = {}", "http.post(url, body = None"}},
		{[]string{"capacity"}, []string{"capacity(run, slo, lo, hi", "@std/capacity.star"}},
		{[]string{"run"}, []string{"Usage: benchbook run", "-baseline"}},
		{[]string{"kernel", "install"}, []string{"Usage: benchbook kernel install", "-user"}},
		{nil, []string{"Commands:", "help", "workload ", "load generation"}},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"help"}, c.args...)...)
		if code != 0 {
			t.Errorf("help %s: exit %d\n%s", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("help %s lacks %q:\n%s", c.args, w, stdout)
			}
		}
	}
	code, _, stderr := runCLI(t, "help", "concurrent")
	if code != 2 || !strings.Contains(stderr, `no builtin, module, stdlib design or command is named "concurrent" (did you mean workload.concurrent?)`) {
		t.Errorf("help concurrent: exit %d, %s", code, stderr)
	}
}

// TestHelpWritesThePages: help -md DIR writes what docs/reference holds,
// and removes a page it does not write.
func TestHelpWritesThePages(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/old.md", []byte("gone"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "help", "-md", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want, err := referencePages(mustReference(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range want {
		if data, err := os.ReadFile(dir + "/" + name); err != nil || string(data) != text {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(dir + "/old.md"); err == nil {
		t.Error("old.md is still there")
	}
}

// TestREPLHelpName: :help NAME prints a builtin's reference at the REPL, and
// a :command's line (:help listed the commands alone).
func TestREPLHelpName(t *testing.T) {
	nb := writeNotebook(t, replNotebook)
	cmd := exec.Command(binary, "repl", nb)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = strings.NewReader(":help workload.http\n:help :rerun\n:help nope\n:help\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"workload.http(url, method = \"GET\"", ":rerun NAME\n    run cell NAME from scratch", ":help [NAME]"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), `:help: no builtin, module, stdlib design or command is named "nope"`) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestInspectShowsAStdlibDesignsDocs: the kernel's inspect of abab (a
// Starlark function whose docs are its module's docstring) shows that
// page; it showed the bare parameter list.
func TestInspectShowsAStdlibDesignsDocs(t *testing.T) {
	g := startest.MustExec(t, startest.Options{Modules: modules(), Stdlib: stdlib.FS}, "load(\"@std/abab.star\", \"abab\")\nfn = abab\n")
	fn, ok := g["fn"].(*starlark.Function)
	if !ok {
		t.Fatalf("abab is a %T", g["fn"])
	}
	if doc := stdlibDoc(fn); !strings.Contains(doc, "pairs defaults to 6") || !strings.Contains(doc, `abab(arms, run, pairs = 6`) {
		t.Errorf("inspect abab: %q", doc)
	}
	if doc := builtinDoc("workload.http"); !strings.Contains(doc, "workload.http(url, method = \"GET\"") {
		t.Errorf("inspect workload.http: %q", doc)
	}
}
