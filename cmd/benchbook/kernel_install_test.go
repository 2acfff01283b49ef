package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// listedSpec is one entry of jupyter kernelspec list --json.
type listedSpec struct {
	ResourceDir string `json:"resource_dir"`
	Spec        struct {
		Argv          []string `json:"argv"`
		Language      string   `json:"language"`
		InterruptMode string   `json:"interrupt_mode"`
	} `json:"spec"`
}

// cleanJupyterEnv is the environment without anything that moves
// Jupyter's directories, HOME set to home.
func cleanJupyterEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "JUPYTER_") || name == "XDG_DATA_HOME" || name == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"HOME=" + home}, extra...)...)
}

// kernelspecApp is "jupyter kernelspec" as Debian's Python has it:
// jupyter_client's own KernelSpecApp (the jupyter-kernelspec script, in
// Debian's jupyter-client package, only launches it).
var kernelspecApp = []string{"-m", "jupyter_client.kernelspecapp"}

// kernelspecs asks Jupyter (jupyter_client and jupyter_core, not our
// reading of them) which kernelspecs it finds: jupyter kernelspec list
// --json, or the command given, which must print that.
func kernelspecs(t *testing.T, py string, env []string, argv ...string) map[string]listedSpec {
	t.Helper()
	cmd := exec.Command(py, append(kernelspecApp, "list", "--json")...)
	if len(argv) > 0 {
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s%s", cmd.Args, err, out, stderr.String())
	}
	var got struct{ Kernelspecs map[string]listedSpec }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	return got.Kernelspecs
}

func checkListed(t *testing.T, specs map[string]listedSpec, dir string) {
	t.Helper()
	s, ok := specs["benchbook"]
	if !ok {
		t.Fatalf("jupyter kernelspec list does not list benchbook: %+v", specs)
	}
	if s.ResourceDir != dir {
		t.Errorf("benchbook listed from %s, want %s", s.ResourceDir, dir)
	}
	want := []string{binary, "kernel", "-f", "{connection_file}"}
	if !reflect.DeepEqual(s.Spec.Argv, want) || s.Spec.Language != "starlark" || s.Spec.InterruptMode != "signal" {
		t.Errorf("benchbook's spec: argv %q, language %q, interrupt_mode %q; want argv %q, starlark, signal", s.Spec.Argv, s.Spec.Language, s.Spec.InterruptMode, want)
	}
}

// kernel install --user puts the kernelspec where Jupyter looks for a
// user's: ~/.local/share/jupyter, or $XDG_DATA_HOME/jupyter, or
// $JUPYTER_DATA_DIR; jupyter kernelspec list finds it there with the
// binary's argv.
func TestKernelInstallUser(t *testing.T) {
	py := needs.PythonModules(t, jupyterPackages, "jupyter_client")
	for _, tc := range []struct {
		name  string
		env   func(home string) []string
		where func(home string) string
	}{
		{"home", func(string) []string { return nil },
			func(home string) string { return filepath.Join(home, ".local", "share", "jupyter") }},
		{"XDG_DATA_HOME", func(home string) []string { return []string{"XDG_DATA_HOME=" + filepath.Join(home, "xdg")} },
			func(home string) string { return filepath.Join(home, "xdg", "jupyter") }},
		{"JUPYTER_DATA_DIR", func(home string) []string { return []string{"JUPYTER_DATA_DIR=" + filepath.Join(home, "jdd")} },
			func(home string) string { return filepath.Join(home, "jdd") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			env := cleanJupyterEnv(home, tc.env(home)...)
			cmd := exec.Command(binary, "kernel", "install", "--user")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			dir := filepath.Join(tc.where(home), "kernels", "benchbook")
			if err != nil || !strings.Contains(string(out), dir) {
				t.Fatalf("kernel install --user: %v\n%s\nwant it to say %s", err, out, dir)
			}
			checkListed(t, kernelspecs(t, py, env), dir)
		})
	}
}

// kernel install without --user or --prefix writes to the system-wide
// directory Jupyter reads (/usr/local/share/jupyter): run in a mount
// namespace of the test's own, over an empty tmpfs at /usr/local/share,
// so the machine's own kernelspecs are neither read nor touched.
func TestKernelInstallDefault(t *testing.T) {
	py := needs.PythonModules(t, jupyterPackages, "jupyter_client")
	unshare := needs.Command(t, "unshare", "util-linux")
	if os.Geteuid() != 0 {
		needs.Missing(t, "root (for a mount namespace of the test's own)", "run the tests as root")
	}
	home := t.TempDir()
	env := cleanJupyterEnv(home, "BB="+binary, "PY="+py)
	script := `mount -t tmpfs tmpfs /usr/local/share && "$BB" kernel install >&2 && "$PY" ` + strings.Join(kernelspecApp, " ") + ` list --json`
	specs := kernelspecs(t, py, env, unshare, "--mount", "--propagation", "private", "sh", "-c", script)
	checkListed(t, specs, filepath.Join(kernelsDir(false, ""), "benchbook"))
	if _, err := os.Stat("/usr/local/share/jupyter/kernels/benchbook"); err == nil {
		t.Errorf("the install reached the machine's /usr/local/share: the namespace did not hold it")
	}
}
