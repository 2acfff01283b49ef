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
	"github.com/benchbook/benchbook/builtins/internal/docker/dockertest"
	"github.com/benchbook/benchbook/runtime"
)

// containerOrphanHelper is the test binary re-executed as a benchbook that
// starts a container and a cluster in an image, prints their ids and
// blocks until it is killed.
func containerOrphanHelper(dir string) {
	s := &runtime.Session{Ctx: context.Background(), Stderr: io.Discard, NotebookDir: dir, CacheDir: dir, Modules: moduleSet}
	th := s.NewThread(&runtime.Cell{Name: "orphan", Key: "c0ffeec0ffeec0ffee"})
	g, err := starlark.ExecFileOptions(runtime.FileOptions(), th, "orphan.star", fmt.Sprintf(`
c = backend.container(%q, cmd = ["spin"], cpus = 0.1)
pg = backend.postgres(image = %q, memory = "256MB")
`, os.Getenv("TOOL_IMAGE"), os.Getenv("PG_IMAGE")), moduleSet.Globals())
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	id, _ := g["c"].(starlark.HasAttrs).Attr("id")
	fmt.Println("IDS", string(id.(starlark.String)), g["pg"].(*Handle).c.img.ctr.ID)
	select {}
}

// TestNoContainerOutlivesKill9: a benchbook with a container and a cluster
// in an image is killed with SIGKILL; the reaper removes both containers.
func TestNoContainerOutlivesKill9(t *testing.T) {
	t.Parallel()
	e := dockertest.Engine(t)
	tool, pgImg := dockertest.Tool(t, e), dockertest.Postgres(t, e)
	cmd, line := backendtest.StartHelper(t, "^$", "BACKEND_CONTAINER_ORPHAN="+t.TempDir(), "TOOL_IMAGE="+tool, "PG_IMAGE="+pgImg)
	ids := strings.Fields(strings.TrimPrefix(line, "IDS "))
	if !strings.HasPrefix(line, "IDS ") || len(ids) != 2 {
		t.Fatalf("helper: %q", line)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for {
			if _, err := e.Inspect(context.Background(), id); err != nil {
				break
			}
			if time.Now().After(deadline) {
				_ = e.Remove(context.Background(), id)
				t.Fatalf("container %.12s outlived a SIGKILL of its benchbook by 30s", id)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
