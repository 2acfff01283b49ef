package cgroup

// ProcsDir is a directory whose cgroup.procs lists the group's processes:
// the v2 directory, or the first v1 controller's the group has (memory,
// pids, cpu, cpuacct, in that order). "" when it has none.
func (g *Group) ProcsDir() string {
	if g.v2 {
		return g.dirs[""]
	}
	for _, c := range []string{"memory", "pids", "cpu", "cpuacct"} {
		if d := g.dirs[c]; d != "" {
			return d
		}
	}
	return ""
}
