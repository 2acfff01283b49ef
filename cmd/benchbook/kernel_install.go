package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"

	"github.com/benchbook/benchbook/runtime/redact"
)

// kernelSpec is a kernelspec's kernel.json.
type kernelSpec struct {
	Argv          []string       `json:"argv"`
	DisplayName   string         `json:"display_name"`
	Language      string         `json:"language"`
	InterruptMode string         `json:"interrupt_mode"`
	Metadata      map[string]any `json:"metadata"`
}

func cmdKernelInstall(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("kernel install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.Bool("user", false, "install for this user (JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter)")
	prefix := fs.String("prefix", "", "install under PREFIX/share/jupyter (a virtualenv's or conda's prefix)")
	name := fs.String("name", "benchbook", "the kernelspec's name (jupyter --kernel NAME)")
	display := fs.String("display-name", "benchbook", "the name frontends show")
	var params paramFlag
	fs.Var(&params, "p", "a notebook parameter the kernel always sets: -p name=value (repeatable)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: benchbook kernel install [--user | --prefix DIR] [flags]\n\nWrites the kernelspec (kernel.json) that makes 'jupyter kernelspec list',\nJupyterLab, VS Code and nbclient find this benchbook as a kernel. Without\n--user or --prefix it goes to the system-wide /usr/local/share/jupyter.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q (see -h)", fs.Arg(0))}
	case *user && *prefix != "":
		return usageError{"--user and --prefix exclude each other"}
	case *name == "" || strings.ContainsAny(*name, `/\ `):
		return usageError{fmt.Sprintf("-name %q: want a plain name", *name)}
	}
	for k, v := range params {
		if redact.SecretName(k) || redact.String(v) != v {
			// no "NAME: " or "NAME=..." here: stderr's redaction reads
			// what follows a secret's name as its value and hides it
			return usageError{fmt.Sprintf("-p %s would write a secret into kernel.json in clear; set it in the notebook session instead (its :params command)", k)}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("kernel install: where is this binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(stderr, "warning: %s is a 'go run' binary that will be deleted: install one with 'go install ./cmd/benchbook' and run its 'kernel install'\n", exe)
	}
	dir := filepath.Join(kernelsDir(*user, *prefix), *name)
	if err := writeKernelSpec(dir, kernelSpecFor(exe, *display, params)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "installed kernelspec %s in %s\n", *name, dir)
	return nil
}

// kernelSpecFor is the kernel.json of this binary. interrupt_mode "signal":
// Jupyter interrupts with SIGINT, which the kernel turns into Ctrl-C.
func kernelSpecFor(exe, display string, params map[string]string) kernelSpec {
	argv := []string{exe, "kernel", "-f", "{connection_file}"}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		argv = append(argv, "-p", k+"="+params[k])
	}
	return kernelSpec{Argv: argv, DisplayName: display, Language: "starlark", InterruptMode: "signal",
		Metadata: map[string]any{"debugger": false}}
}

// kernelsDir is where Jupyter looks for kernelspecs, as jupyter_core
// places them.
func kernelsDir(user bool, prefix string) string {
	switch {
	case prefix != "":
		return filepath.Join(prefix, "share", "jupyter", "kernels")
	case user:
		return filepath.Join(jupyterDataDir(), "kernels")
	}
	return filepath.Join("/usr/local/share/jupyter", "kernels")
}

// jupyterDataDir is jupyter_core's user data directory.
func jupyterDataDir() string {
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	if goruntime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Jupyter")
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "jupyter")
	}
	return filepath.Join(home, ".local", "share", "jupyter")
}

func writeKernelSpec(dir string, spec kernelSpec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("kernel install: %w", err)
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "kernel.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("kernel install: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("kernel install: %w", err)
	}
	return nil
}
