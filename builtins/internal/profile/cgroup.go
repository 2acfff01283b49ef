package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// perfCgroupName is the name perf's -G takes for dir: its path under the
// mount of the hierarchy that has the perf_event controller (a v1 mount
// with it, else the v2 one, where perf_event is always on when no v1
// hierarchy holds it).
func perfCgroupName(dir string) (string, error) {
	dir = filepath.Clean(dir)
	mnt, err := perfEventMount()
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(mnt, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("profile: cgroup %s is not below %s, the hierarchy with the perf_event controller: perf cannot sample by it (list its processes instead)", dir, mnt)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return "", fmt.Errorf("profile: cgroup %s: %w", dir, err)
	}
	return rel, nil
}

func perfEventMount() (string, error) {
	mounts, err := procfs.Mounts()
	if err != nil {
		return "", err
	}
	var v2 string
	for _, m := range mounts {
		switch m.FSType {
		case "cgroup":
			if m.HasOption("perf_event") {
				return m.Point, nil
			}
		case "cgroup2":
			v2 = m.Point
		}
	}
	if v2 != "" && !perfEventInV1() {
		return v2, nil
	}
	return "", fmt.Errorf("profile: no cgroup hierarchy with the perf_event controller is mounted")
}

// perfEventInV1 reports whether /proc/cgroups puts perf_event in a v1
// hierarchy (a non-zero hierarchy id).
func perfEventInV1() bool {
	id, ok := procfs.ControllerHierarchy("perf_event")
	return ok && id != "0"
}
