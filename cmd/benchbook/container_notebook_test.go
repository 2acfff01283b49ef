package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/needs"
)

// TestContainerNotebook runs notebooks/pg-container-limits.star — an ABAB
// study on a PostgreSQL image held to 1 CPU and 512 MB — on the real engine:
// every arm finds the state it must (the notebook fails otherwise), and a
// second run is all hits. The image is made offline by the notebook's own
// script (notebooks/images/postgres-host.sh) when the engine lacks it.
func TestContainerNotebook(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a containerised cluster")
	}
	needs.Postgres(t)
	if err := exec.Command("docker", "version").Run(); err != nil {
		needs.Missing(t, "a running container engine (docker version: "+err.Error()+")", "apt-get install docker.io; dockerd &")
		return
	}
	if exec.Command("docker", "image", "inspect", "benchbook/postgres-host:15").Run() != nil {
		if out, err := exec.Command("bash", "../../notebooks/images/postgres-host.sh").CombinedOutput(); err != nil {
			t.Fatalf("postgres-host.sh: %v\n%s", err, out)
		}
	}
	src, err := os.ReadFile("../../notebooks/pg-container-limits.star")
	if err != nil {
		t.Fatal(err)
	}
	nb := filepath.Join(t.TempDir(), "pg-container-limits.star")
	if err := os.WriteFile(nb, src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "-p", "duration=2s", "-p", "pairs=1", "-p", "rows=20000", "-p", "clients=2", nb}
	code, _, stderr := runCLI(t, args...)
	if code != 0 || !strings.Contains(stderr, "restored from its snapshot") {
		t.Fatalf("first run: exit %d (want 0, with a restore between arms)\n%s", code, stderr)
	}
	page, _ := os.ReadFile(strings.TrimSuffix(nb, ".star") + ".html")
	if !strings.Contains(string(page), "postgres in container: image benchbook/postgres-host:15 sha256:") {
		t.Errorf("the record's provenance does not name the image and its digest")
	}
	code, _, stderr = runCLI(t, args...)
	if code != 0 || !strings.Contains(stderr, "7 hit, 1 live") {
		t.Fatalf("cached rerun: exit %d, want 7 hits\n%s", code, stderr)
	}
}
