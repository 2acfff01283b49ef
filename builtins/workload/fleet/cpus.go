package fleet

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseCPUs reads a CPU list as taskset -c takes it: "0", "0-3", "0,2,4-5".
func ParseCPUs(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= 1024 {
			return nil, fmt.Errorf("cpus: malformed CPU list %q (want e.g. \"0\", \"2-3\", \"0,2\")", s)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// Pin restricts this process to cpus: every thread it has now (Go starts
// several before main), and so every thread they create later, which
// inherits its creator's mask. GOMAXPROCS follows, as Go reads the mask
// only at start.
func Pin(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	// Twice: a thread created while the first pass ran copied an old mask.
	for range 2 {
		tids, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("pin: %w", err)
		}
		for _, t := range tids {
			tid, _ := strconv.Atoi(t.Name())
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin to CPUs %v: %w", cpus, err)
			}
		}
	}
	runtime.GOMAXPROCS(set.Count())
	return nil
}
