package postgres

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/backendtest"
	"github.com/benchbook/benchbook/builtins/internal/procfs"
	"github.com/benchbook/benchbook/runtime"
)

// orphanHelper is the test binary re-executed as a benchbook that starts a
// cluster and a target and then blocks until it is killed.
func orphanHelper(dir string) {
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: dir, CacheDir: dir}
	th := s.NewThread(&runtime.Cell{Name: "orphan", Key: "feedfacefeedface"})
	g, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "orphan.star", `
pg = backend.postgres()
pg.exec("SELECT 1")
target = backend.process(["sleep", "1000"])
`, runtime.Predeclared())
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	pg := g["pg"].(*Handle)
	target, _ := g["target"].(starlark.HasAttrs).Attr("pid")
	fmt.Printf("PIDS %d %s %s\n", pg.postmasterPID(), target, pg.c.dataDir())
	select {}
}

func TestOrphansDieWithBenchbook(t *testing.T) {
	dir, err := os.MkdirTemp("", "bbpg-orphan-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd, line := backendtest.StartHelper(t, "^$", "BACKEND_ORPHAN_HELPER="+dir)
	var postmaster, target int
	var dataDir string
	if _, err := fmt.Sscanf(line, "PIDS %d %d %s", &postmaster, &target, &dataDir); err != nil {
		t.Fatalf("helper said %q: %v", line, err)
	}
	children := []int{postmaster, target}
	for _, p := range procfs.Tree(postmaster) {
		children = append(children, p.PID)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := alive(children, dataDir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running 10s after benchbook was killed: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive lists the pids still running, plus any process whose command line
// names dataDir.
func alive(pids []int, dataDir string) []string {
	var left []string
	for _, pid := range pids {
		if p, ok := procfs.ReadProc(pid); ok {
			left = append(left, fmt.Sprintf("%d %q", pid, p.Cmdline))
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if p, ok := procfs.ReadProc(pid); ok && strings.Contains(p.Cmdline, dataDir) {
			left = append(left, fmt.Sprintf("%d %q", pid, p.Cmdline))
		}
	}
	return left
}
