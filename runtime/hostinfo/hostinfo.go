// Package hostinfo describes the machine a measurement was taken on. It
// gives its fingerprint (CPU, cores, memory, kernel) and how busy it was.
package hostinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
)

// Host is a machine's fingerprint plus its load when read.
type Host struct {
	Name     string     `json:"name"`
	CPU      string     `json:"cpu"`
	Cores    int        `json:"cores"`
	MemBytes uint64     `json:"mem_bytes"`
	Kernel   string     `json:"kernel"`
	Load     [3]float64 `json:"load"`
}

// Fingerprint identifies the machine without its load: two records with the
// same fingerprint were measured on the same kind of box.
func (h Host) Fingerprint() string {
	return fmt.Sprintf("%s | %s | %d cores | %d GiB | %s", h.Name, h.CPU, h.Cores, h.MemBytes>>30, h.Kernel)
}

var (
	once   sync.Once
	static Host
)

// Read returns the host's fingerprint and current load average. The static
// part is read once per process.
func Read() Host {
	once.Do(func() {
		static.Name, _ = os.Hostname()
		static.CPU = cpuModel()
		static.Cores = goruntime.NumCPU()
		static.MemBytes = memTotal()
		static.Kernel = kernel()
	})
	h := static
	h.Load, _ = LoadAvg()
	return h
}

// LoadAvg reads /proc/loadavg.
func LoadAvg() ([3]float64, error) {
	var l [3]float64
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l, fmt.Errorf("load average: %w", err)
	}
	f := strings.Fields(string(data))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l, nil
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return goruntime.GOARCH
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return goruntime.GOARCH
}

func memTotal() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func kernel() string {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return goruntime.GOOS
	}
	return goruntime.GOOS + " " + strings.TrimSpace(string(data))
}
