package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// What /proc says of the whole machine, one reader a file.

// CPUTimes is the first line of /proc/stat: the machine's CPU time since
// boot over all CPUs, in ticks (guest time is inside User).
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// ReadCPUTimes reads the first line of /proc/stat.
func ReadCPUTimes() (CPUTimes, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return CPUTimes{}, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	n := func(i int) uint64 { v, _ := strconv.ParseUint(f[i], 10, 64); return v }
	return CPUTimes{User: n(1), Nice: n(2), System: n(3), Idle: n(4), IOWait: n(5), IRQ: n(6), SoftIRQ: n(7), Steal: n(8)}, nil
}

// Uptime is the time since boot in seconds (/proc/uptime).
func Uptime() (float64, error) {
	f, err := os.Open("/proc/uptime")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var up float64
	if _, err := fmt.Fscan(bufio.NewReader(f), &up); err != nil {
		return 0, fmt.Errorf("/proc/uptime: %w", err)
	}
	return up, nil
}

// LoadAvg is /proc/loadavg's 1, 5 and 15 minute load averages.
func LoadAvg() ([3]float64, error) {
	var l [3]float64
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l, err
	}
	f := strings.Fields(string(data))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l, nil
}

// CPUModel is the first "model name" of /proc/cpuinfo; false when there is
// none (not x86) or the file cannot be read.
func CPUModel() (string, bool) {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "", false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// MemTotalBytes is /proc/meminfo's MemTotal (0 when it cannot be read).
func MemTotalBytes() uint64 {
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

// Sysctl is a kernel parameter named as sysctl(8) names it
// ("kernel.osrelease", "kernel.random.boot_id"), from /proc/sys, without
// its surrounding white space.
func Sysctl(name string) (string, error) {
	data, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// MemStallMicros is the total µs some task stalled on memory
// (/proc/pressure/memory, "some ... total="); false when the kernel does
// not say.
func MemStallMicros() (int64, bool) {
	data, err := os.ReadFile("/proc/pressure/memory")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	_, total, ok := strings.Cut(line, "total=")
	if !ok || !strings.HasPrefix(line, "some") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	return n, err == nil
}

// SwapPages is pages swapped in plus out since boot (/proc/vmstat's pswpin
// and pswpout); false unless both are there.
func SwapPages() (int64, bool) {
	data, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return 0, false
	}
	var n int64
	found := 0
	for _, l := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(l, " ")
		if k == "pswpin" || k == "pswpout" {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
			found++
		}
	}
	return n, found == 2
}

// ControllerHierarchy is the v1 hierarchy id /proc/cgroups gives a cgroup
// controller ("0": none, or v2); false when it is not listed.
func ControllerHierarchy(controller string) (string, bool) {
	data, err := os.ReadFile("/proc/cgroups")
	if err != nil {
		return "", false
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == controller {
			return f[1], true
		}
	}
	return "", false
}

// Alive says whether /proc shows a process pid (a zombie too).
func Alive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
