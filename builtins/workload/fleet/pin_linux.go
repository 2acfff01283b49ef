package fleet

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/benchbook/benchbook/runtime/procfs"
)

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
		tids, err := procfs.Tasks(os.Getpid())
		if err != nil {
			return fmt.Errorf("pin: %w", err)
		}
		for _, tid := range tids {
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin to CPUs %v: %w", cpus, err)
			}
		}
	}
	runtime.GOMAXPROCS(set.Count())
	return nil
}
