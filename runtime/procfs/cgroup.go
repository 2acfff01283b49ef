package procfs

import (
	"os"
	"strconv"
	"strings"
)

// CgroupLine is one line of /proc/PID/cgroup: "4:memory:/docker/ID" (v1;
// controllers may be joined, "cpu,cpuacct") or "0::/path" (v2: no
// controllers).
type CgroupLine struct {
	ID          string
	Controllers string // as written, comma-separated
	Path        string
}

// Cgroups reads /proc/PID/cgroup (0: this process's).
func Cgroups(pid int) ([]CgroupLine, error) {
	who := "self"
	if pid != 0 {
		who = strconv.Itoa(pid)
	}
	data, err := os.ReadFile("/proc/" + who + "/cgroup")
	if err != nil {
		return nil, err
	}
	return ParseCgroups(string(data)), nil
}

// ParseCgroups reads the lines of a /proc/PID/cgroup; a line without two
// colons is left out (a path may hold more).
func ParseCgroups(data string) []CgroupLine {
	var out []CgroupLine
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		out = append(out, CgroupLine{ID: parts[0], Controllers: parts[1], Path: parts[2]})
	}
	return out
}

// V2Path is the process's path in the v2 hierarchy (its "0::" line), ""
// when it has none.
func V2Path(lines []CgroupLine) string {
	for _, l := range lines {
		if l.ID == "0" && l.Controllers == "" {
			return l.Path
		}
	}
	return ""
}
