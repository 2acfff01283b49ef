package needs

import (
	"os/exec"
	"strings"
)

// SystemPython is Debian's Python, where apt installs the Jupyter packages
// (python3-jupyter-client, python3-nbclient, ...). The python3 first on
// PATH may be another one, without them.
const SystemPython = "/usr/bin/python3"

// PythonModules returns SystemPython when it imports every module, else
// stops t with install (the Debian packages that bring them).
func PythonModules(t T, install string, modules ...string) string {
	t.Helper()
	script := "import " + strings.Join(modules, ", ")
	if out, err := exec.Command(SystemPython, "-c", script).CombinedOutput(); err != nil {
		Missing(t, SystemPython+" with "+strings.Join(modules, ", ")+" ("+strings.TrimSpace(lastLine(string(out)))+")", "apt-get install "+install)
	}
	return SystemPython
}

// Command returns the path of a program on PATH, else stops t.
func Command(t T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, "apt-get install "+install)
	}
	return p
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
