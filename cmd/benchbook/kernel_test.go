package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// jupyterPackages are the Debian packages the kernel's tests drive it with.
const jupyterPackages = "python3-jupyter-kernel-test python3-jupyter-client python3-nbclient python3-nbformat"

// installKernel installs the test binary's kernelspec under a prefix of the
// test's own (with kernel install, as a user would) and returns the
// environment that makes Jupyter find it there and only there.
func installKernel(t *testing.T, args ...string) []string {
	t.Helper()
	prefix := t.TempDir()
	out, err := exec.Command(binary, append([]string{"kernel", "install", "--prefix", prefix}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kernel install: %v\n%s", err, out)
	}
	data := filepath.Join(prefix, "share", "jupyter")
	return append(os.Environ(),
		"JUPYTER_PATH="+data,
		"JUPYTER_DATA_DIR="+filepath.Join(t.TempDir(), "data"),
		"JUPYTER_RUNTIME_DIR="+filepath.Join(t.TempDir(), "runtime"),
		"JUPYTER_CONFIG_DIR="+filepath.Join(t.TempDir(), "config"),
		"JUPYTER_PLATFORM_DIRS=1", "PYDEVD_DISABLE_FILE_VALIDATION=1", "NO_COLOR=1")
}

// runPython runs a Python script of testdata/jupyter with Debian's Python
// in dir, bounded by timeout.
func runPython(t *testing.T, env []string, dir string, timeout time.Duration, script string, args ...string) (string, error) {
	t.Helper()
	py := needs.PythonModules(t, jupyterPackages, "jupyter_kernel_test", "jupyter_client", "nbclient", "nbformat")
	abs, err := filepath.Abs(filepath.Join("testdata", "jupyter", script))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{abs}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in %v:\n%s", script, timeout, out)
	}
	return string(out), err
}

// TestKernelConformance runs the Jupyter project's kernel test suite
// (Debian's python3-jupyter-kernel-test) against the kernel. Every test
// the suite offers runs but test_clear_output, which needs code that
// clears a cell's output: no benchbook builtin does that.
func TestKernelConformance(t *testing.T) {
	env := installKernel(t)
	out, err := runPython(t, env, t.TempDir(), 3*time.Minute, "kernel_conformance.py", "-v")
	if err != nil {
		t.Fatalf("the kernel test suite failed: %v\n%s", err, out)
	}
	skipped := regexp.MustCompile(`(?m)^(test_\w+) \(.*\) \.\.\. skipped`).FindAllStringSubmatch(out, -1)
	var names []string
	for _, m := range skipped {
		names = append(names, m[1])
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "test_clear_output" {
		t.Errorf("skipped %v, want only test_clear_output\n%s", names, out)
	}
	if !strings.Contains(out, "Ran 12 tests") {
		t.Errorf("the suite did not run its 12 tests:\n%s", out)
	}
	t.Logf("%s", lastLines(out, 3))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
