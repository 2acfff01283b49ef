// Package hostinfo describes the machine a measurement was taken on. It
// gives its fingerprint (CPU, cores, memory, kernel) and how busy it was.
package hostinfo

import (
	"fmt"
	"os"
	goruntime "runtime"
	"sync"

	"github.com/benchbook/benchbook/runtime/procfs"
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
	l, err := procfs.LoadAvg()
	if err != nil {
		return l, fmt.Errorf("load average: %w", err)
	}
	return l, nil
}

func cpuModel() string {
	if m, ok := procfs.CPUModel(); ok {
		return m
	}
	return goruntime.GOARCH
}

func memTotal() uint64 { return procfs.MemTotalBytes() }

func kernel() string {
	release, err := procfs.Sysctl("kernel.osrelease")
	if err != nil {
		return goruntime.GOOS
	}
	return goruntime.GOOS + " " + release
}
