package fleet

import (
	"fmt"
	"strconv"
	"strings"
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
