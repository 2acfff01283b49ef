//go:build !linux

package fleet

import "fmt"

// Pin needs Linux's sched_setaffinity on every thread; elsewhere an agent
// asked to pin says so rather than run unpinned as if it were.
func Pin(cpus []int) error {
	return fmt.Errorf("pin to CPUs %v: CPU pinning needs Linux", cpus)
}
