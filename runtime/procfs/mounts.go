package procfs

import (
	"bufio"
	"io"
	"os"
	"strings"
)

// Mount is one line of /proc/self/mountinfo (proc(5)): "36 25 0:30 /
// /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw". Paths are as
// the kernel writes them (a space is \040).
type Mount struct {
	Root   string // field 4: the mount's root within its filesystem
	Point  string // field 5: where it is mounted
	FSType string // the first field after " - "
	Source string
	Super  []string // the superblock's options, split at commas
}

// Mounts reads this process's mounts, in the kernel's order. Lines
// without five fields before " - " and three after are left out, as is
// what follows a read error.
func Mounts() ([]Mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountinfo(f), nil
}

func parseMountinfo(r io.Reader) []Mount {
	var out []Mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if !ok || len(pf) < 5 || len(qf) < 3 {
			continue
		}
		out = append(out, Mount{Root: pf[3], Point: pf[4], FSType: qf[0], Source: qf[1], Super: strings.Split(qf[2], ",")})
	}
	return out
}

// HasOption says whether the superblock's options hold o ("perf_event").
func (m Mount) HasOption(o string) bool {
	for _, s := range m.Super {
		if s == o {
			return true
		}
	}
	return false
}
