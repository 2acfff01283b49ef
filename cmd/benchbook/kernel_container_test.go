package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// containerCell starts a container of the offline test image (one static
// program, FROM scratch) under a name of the test's.
func containerCell(tool, name string) string {
	return fmt.Sprintf("# %%%% box\nc = backend.container(%q, cmd = [\"alloc\", \"1\"], ready = \"log:ready\", name = %q)\nc.name", tool, name)
}

// A shutdown_request stops the containers the kernel's cells started: none
// is left on the engine, not by its name nor by the kernel's pid label,
// and the kernel exits by itself (jupyter_client would kill it after 5 s,
// and a killed kernel leaves its containers to its reaper).
func TestKernelShutdownRemovesContainers(t *testing.T) {
	e, tool := backendtest.ToolEngine(t)
	docker := needs.Command(t, "docker", "docker.io")
	name := fmt.Sprintf("bb-kernel-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { e.Remove(context.Background(), name) })
	env := installKernel(t)
	ours := []string{docker, "ps", "-aq", "--filter", "label=benchbook.pid={kernel_pid}"}
	steps := []step{
		{Code: containerCell(tool, name), line: "live", result: fmt.Sprintf("%q", name)},
		{Run: ours},
	}
	out, err := runPython(t, env, t.TempDir(), 3*time.Minute, "cells.py", writeSteps(t, steps))
	if err != nil {
		t.Fatalf("cells.py: %v\n%s", err, out)
	}
	s := readSession(t, out, steps)
	checkSteps(t, steps, s.Steps)
	if strings.TrimSpace(s.Steps[1].Stdout) == "" {
		t.Fatalf("docker ps finds no container labelled with the kernel's pid %d while it runs one: %+v", s.KernelPid, s.Steps[1])
	}
	t.Logf("shutdown took %.2fs", s.ShutdownSeconds)
	if s.ShutdownSeconds > 4 {
		t.Errorf("shutdown took %.1fs: the kernel did not exit by itself", s.ShutdownSeconds)
	}
	if _, err := e.Inspect(context.Background(), name); err == nil {
		t.Errorf("container %s is still on the engine after the kernel's shutdown", name)
	}
	left, err := exec.Command(docker, "ps", "-aq", "--filter", fmt.Sprintf("label=benchbook.pid=%d", s.KernelPid)).CombinedOutput()
	if err != nil || strings.TrimSpace(string(left)) != "" {
		t.Errorf("containers of the kernel (pid %d) left after its shutdown: %q %v", s.KernelPid, left, err)
	}
}

// deadOwnerKernelScript is the first process of a pid namespace: it runs
// the notebook $NB1, which starts a container and blocks, kills
// everything else in the namespace (benchbook, its reaper, its children),
// then starts a kernel in $DIR through Jupyter's client (cells.py, steps
// $STEPS) and prints what it saw.
const deadOwnerKernelScript = killOwnerScript + `echo "KERNEL"
cd "$DIR" && "$PY" "$CELLS" "$STEPS"
`

// A kernel starting removes the container a benchbook killed with its
// reaper left running, as the next run, repl or watch of any notebook
// does, and says so in the first cell it executes (the kernel's log is
// no place a notebook user reads). In a pid namespace of its own
// (backendtest.InPidNamespace), so no other benchbook's sweep can remove
// the container first: gone means this kernel removed it.
func TestKernelStartRemovesADeadBenchbooksContainer(t *testing.T) {
	e, tool := backendtest.ToolEngine(t)
	py := needs.PythonModules(t, jupyterPackages, "jupyter_client")
	name := fmt.Sprintf("bb-dead-owner-kernel-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { e.Remove(context.Background(), name) })
	nb1 := writeNB(t, fmt.Sprintf(`# %%%% target
c = backend.container(%q, cmd = ["alloc", "1"], ready = "log:ready", name = %q)

# %%%% hold
_c = c
r = workload.exec(["sleep", "60"], runs = 1, warmup = 0)
`, tool, name))
	steps := []step{{Code: "1 + 1", result: "2"}, {Code: "2 + 2", result: "4"}}
	cells, err := filepath.Abs(filepath.Join("testdata", "jupyter", "cells.py"))
	if err != nil {
		t.Fatal(err)
	}
	var jupyterEnv []string
	for _, kv := range installKernel(t) {
		if strings.HasPrefix(kv, "JUPYTER_") {
			jupyterEnv = append(jupyterEnv, kv)
		}
	}
	out, err := backendtest.InPidNamespace(t, append(jupyterEnv, "BB="+binary, "NB1="+nb1, "PY="+py, "CELLS="+cells,
		"STEPS="+writeSteps(t, steps), "DIR="+t.TempDir(), "OUT1="+filepath.Join(t.TempDir(), "out1")), "sh", "-c", deadOwnerKernelScript)
	_, kernel, held := strings.Cut(out, "KERNEL\n")
	if err != nil || !held {
		t.Fatalf("%v\n%s", err, out)
	}
	s := readSession(t, kernel, steps)
	checkSteps(t, steps, s.Steps)
	if _, err := e.Inspect(context.Background(), name); err == nil {
		t.Errorf("the dead benchbook's container %s still runs after a kernel started:\n%s", name, kernel)
	}
	said := "removed 1 container(s) that a benchbook now gone left running: " + name
	if !strings.Contains(s.Steps[0].Stdout, said) {
		t.Errorf("the kernel's first execution did not say it removed %s: stdout %q", name, s.Steps[0].Stdout)
	}
	if strings.Contains(s.Steps[1].Stdout, said) {
		t.Errorf("the second execution said it again: %q", s.Steps[1].Stdout)
	}
}
