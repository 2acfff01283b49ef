package workload

import "fmt"

// cgroupCols are the figures of a container's (or a limited target's)
// cgroup that a run's summary table shows when an observer gave them:
// how much of its CPU quota and memory the target used in the window.
var cgroupCols = []struct {
	key, head string
	format    func(float64) string
}{
	{"server_cpu_cores", "server cores", func(v float64) string { return fmt.Sprintf("%.2f", v) }},
	{"mem_anon_kb", "anon mem", kbText},
	{"mem_high_water_kb", "mem high-water", kbText},
}

func kbText(kb float64) string {
	if kb >= 1024 {
		return fmt.Sprintf("%.1f MB", kb/1024)
	}
	return fmt.Sprintf("%.0f kB", kb)
}

// appendCgroupCols adds the cgroup figures among observed to a summary row.
func appendCgroupCols(head, row []string, observed map[string]float64) ([]string, []string) {
	for _, c := range cgroupCols {
		if v, ok := observed[c.key]; ok {
			head, row = append(head, c.head), append(row, c.format(v))
		}
	}
	return head, row
}
