package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Stats is one reading of a group's counters.
type Stats struct {
	CPUNs      int64 // CPU time of every process in the group, ever (ns)
	Anon       int64 // anonymous memory now (bytes): heaps, stacks
	Cache      int64 // page cache charged to the group now (bytes)
	Usage      int64 // memory charged now (bytes)
	Peak       int64 // the kernel's high-water of Usage (bytes), 0 where the kernel keeps none
	Limit      int64 // memory limit (bytes), -1 for none
	IORead     int64 // bytes read from block devices, ever
	IOWrite    int64 // bytes written to block devices, ever
	OOMKills   int64 // processes the OOM killer killed in the group, ever
	NrThrottle int64 // CPU quota periods in which the group was throttled, ever
}

// Read reads the group's counters.
func (g *Group) Read() (Stats, error) {
	if g.v2 {
		return g.readV2()
	}
	return g.readV1()
}

func (g *Group) readV1() (Stats, error) {
	var s Stats
	cpu, err := readInt(filepath.Join(g.dir("cpuacct"), "cpuacct.usage"))
	if err != nil {
		if os.IsNotExist(err) {
			return s, ErrNoGroup
		}
		return s, err
	}
	s.CPUNs = cpu
	mem := g.dir("memory")
	st := readKV(filepath.Join(mem, "memory.stat"))
	s.Anon, s.Cache = pick(st, "total_rss", "rss"), pick(st, "total_cache", "cache")
	s.Usage, _ = readInt(filepath.Join(mem, "memory.usage_in_bytes"))
	s.Peak, _ = readInt(filepath.Join(mem, "memory.max_usage_in_bytes"))
	s.Limit, _ = readInt(filepath.Join(mem, "memory.limit_in_bytes"))
	if s.Limit >= 1<<62 {
		s.Limit = -1 // v1 writes "no limit" as a page-rounded maximum
	}
	s.OOMKills = readKV(filepath.Join(mem, "memory.oom_control"))["oom_kill"]
	s.IORead, s.IOWrite = blkioV1(g.dir("blkio"))
	s.NrThrottle = readKV(filepath.Join(g.dir("cpu"), "cpu.stat"))["nr_throttled"]
	return s, nil
}

// pick is the first key present.
func pick(m map[string]int64, keys ...string) int64 {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return 0
}

// blkioV1 sums "8:0 Read 4096" lines; the recursive file includes groups
// below (a container's own children).
func blkioV1(dir string) (read, write int64) {
	if dir == "" {
		return 0, 0
	}
	data, err := os.ReadFile(filepath.Join(dir, "blkio.throttle.io_service_bytes_recursive"))
	if err != nil {
		data, _ = os.ReadFile(filepath.Join(dir, "blkio.throttle.io_service_bytes"))
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		n, _ := strconv.ParseInt(f[2], 10, 64)
		switch f[1] {
		case "Read":
			read += n
		case "Write":
			write += n
		}
	}
	return read, write
}

func (g *Group) readV2() (Stats, error) {
	var s Stats
	dir := g.dirs[""]
	cpu := readKV(filepath.Join(dir, "cpu.stat"))
	if len(cpu) == 0 {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return s, ErrNoGroup
		}
	}
	s.CPUNs, s.NrThrottle = cpu["usage_usec"]*1000, cpu["nr_throttled"]
	st := readKV(filepath.Join(dir, "memory.stat"))
	s.Anon, s.Cache = st["anon"], st["file"]
	s.Usage, _ = readInt(filepath.Join(dir, "memory.current"))
	s.Peak, _ = readInt(filepath.Join(dir, "memory.peak"))
	s.Limit, _ = readInt(filepath.Join(dir, "memory.max"))
	if s.Limit == 0 {
		s.Limit = -1
	}
	s.OOMKills = readKV(filepath.Join(dir, "memory.events"))["oom_kill"]
	s.IORead, s.IOWrite = ioV2(dir)
	return s, nil
}

// ioV2 sums "8:0 rbytes=1 wbytes=2 ..." lines of io.stat.
func ioV2(dir string) (read, write int64) {
	data, _ := os.ReadFile(filepath.Join(dir, "io.stat"))
	for _, l := range strings.Split(string(data), "\n") {
		for _, kv := range strings.Fields(l) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "rbytes":
				read += n
			case "wbytes":
				write += n
			}
		}
	}
	return read, write
}
