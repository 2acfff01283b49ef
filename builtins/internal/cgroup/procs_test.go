package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ProcsDir of a process's own cgroup lists that process.
func TestProcsDir(t *testing.T) {
	g, err := FromPid(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	dir := g.ProcsDir()
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if !slices.Contains(strings.Fields(string(data)), strconv.Itoa(os.Getpid())) {
		t.Errorf("%s/cgroup.procs does not list this process", dir)
	}
}
