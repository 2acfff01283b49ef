package backend

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/cgroup"
	"github.com/benchbook/benchbook/builtins/internal/docker"
)

// CleanOrphans removes what benchbooks that are gone left outside any
// cache dir: their containers (which the reaper removes unless it died
// too) and their empty limit cgroups. It says what it removed, "" for
// nothing; an engine that does not run is no error (there is nothing of
// ours on it to remove).
func CleanOrphans(ctx context.Context) string {
	var parts []string
	if e, err := docker.Connect(ctx); err == nil {
		defer e.Close()
		gone, err := e.Sweep(ctx)
		if len(gone) > 0 {
			parts = append(parts, fmt.Sprintf("removed %d containers of benchbooks that are gone (%s)", len(gone), strings.Join(gone, ", ")))
		}
		if err != nil {
			parts = append(parts, "container sweep: "+err.Error())
		}
	}
	if n := cgroup.RemoveStale(kit.GroupPrefix, kit.StaleGroup); n > 0 {
		parts = append(parts, fmt.Sprintf("removed %d empty cgroups of benchbooks that are gone", n))
	}
	return strings.Join(parts, "\n")
}

// SweepDead removes, at the start of any run, the containers whose owner
// is gone for sure (docker.SweepDead): a benchbook killed together with
// its reaper (a CI job's cgroup kill) left its containers running until
// benchbook clean. It says what it removed, "" for nothing; without an
// engine it costs a stat of the default socket.
func SweepDead(ctx context.Context) string {
	if os.Getenv("DOCKER_HOST") == "" {
		if _, err := os.Stat("/var/run/docker.sock"); err != nil {
			return ""
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	e, err := docker.Connect(ctx)
	if err != nil {
		return ""
	}
	defer e.Close()
	gone, err := e.SweepDead(ctx)
	var parts []string
	if len(gone) > 0 {
		parts = append(parts, fmt.Sprintf("removed %d container(s) that a benchbook now gone left running: %s", len(gone), strings.Join(gone, ", ")))
	}
	if err != nil {
		parts = append(parts, "container sweep: "+err.Error())
	}
	return strings.Join(parts, "\n")
}
