package procfs

import (
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestParseMountinfo: the fields before and after " - " (optional fields
// of any number between), and lines too short are left out.
func TestParseMountinfo(t *testing.T) {
	const text = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
30 22 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,cpu,cpuacct
31 22 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 master:3 - cgroup2 cgroup2 rw,nsdelegate
32 22 0:28 /sub /mnt/with\040space rw - tmpfs tmpfs rw
33 22 0:29 / /short rw
34 22 0:30 / /two rw - tmpfs tmpfs
`
	got := parseMountinfo(strings.NewReader(text))
	want := []Mount{
		{Root: "/", Point: "/", FSType: "ext4", Source: "/dev/sda1", Super: []string{"rw", "errors=remount-ro"}},
		{Root: "/", Point: "/sys/fs/cgroup/cpu,cpuacct", FSType: "cgroup", Source: "cgroup", Super: []string{"rw", "cpu", "cpuacct"}},
		{Root: "/", Point: "/sys/fs/cgroup/unified", FSType: "cgroup2", Source: "cgroup2", Super: []string{"rw", "nsdelegate"}},
		{Root: "/sub", Point: `/mnt/with\040space`, FSType: "tmpfs", Source: "tmpfs", Super: []string{"rw"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", got, want)
	}
	if !got[1].HasOption("cpuacct") || got[1].HasOption("cpu,cpuacct") || got[1].HasOption("perf_event") {
		t.Errorf("HasOption on %v", got[1].Super)
	}
}

// TestMountsAgreeWithProcMounts: this process's mounts, point and type,
// are those /proc/self/mounts (the kernel's other format) lists.
func TestMountsAgreeWithProcMounts(t *testing.T) {
	got, err := Mounts()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(l); len(f) >= 3 {
			want = append(want, f[1]+" "+f[2])
		}
	}
	var have []string
	for _, m := range got {
		have = append(have, m.Point+" "+m.FSType)
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("mountinfo gives\n%v\n/proc/self/mounts\n%v", have, want)
	}
}

// TestSystemReadersAgreeWithTheKernelsCalls: uptime, load, memory and the
// kernel's release as sysinfo(2) and uname(2) give them.
func TestSystemReadersAgreeWithTheKernelsCalls(t *testing.T) {
	var before, after syscall.Sysinfo_t
	if err := syscall.Sysinfo(&before); err != nil {
		t.Fatal(err)
	}
	up, err := Uptime()
	if err != nil {
		t.Fatal(err)
	}
	load, err := LoadAvg()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Sysinfo(&after); err != nil {
		t.Fatal(err)
	}
	if up < float64(before.Uptime)-1 || up > float64(after.Uptime)+1 {
		t.Errorf("uptime %.2f s; sysinfo says %d..%d s", up, before.Uptime, after.Uptime)
	}
	for i := range load {
		lo, hi := float64(min(before.Loads[i], after.Loads[i]))/65536, float64(max(before.Loads[i], after.Loads[i]))/65536
		if load[i] < lo-0.01 || load[i] > hi+0.01 {
			t.Errorf("load[%d] %.2f; sysinfo says %.2f..%.2f", i, load[i], lo, hi)
		}
	}
	if got, want := MemTotalBytes(), uint64(before.Totalram)*uint64(before.Unit); got != want {
		t.Errorf("MemTotal %d bytes; sysinfo says %d", got, want)
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	if got, err := Sysctl("kernel.osrelease"); err != nil || got != string(rel) {
		t.Errorf("Sysctl(kernel.osrelease) = %q, %v; uname says %q", got, err, rel)
	}
}

// TestMachineAndProcessIdentity: the boot id is a UUID that stays; the
// pid namespace's link names the inode PidNamespace gives; a reaped child
// is not Alive, this process is.
func TestMachineAndProcessIdentity(t *testing.T) {
	id, err := Sysctl("kernel.random.boot_id")
	if err != nil || len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Errorf("the boot id: %q, %v", id, err)
	}
	if again, _ := Sysctl("kernel.random.boot_id"); again != id {
		t.Errorf("the boot id changed: %q then %q", id, again)
	}
	if link, err := PidNamespaceLink(); err != nil || link != "pid:["+PidNamespace()+"]" {
		t.Errorf("PidNamespaceLink() = %q, %v; PidNamespace() = %q", link, err, PidNamespace())
	}
	if !Alive(os.Getpid()) {
		t.Errorf("this process is not Alive")
	}
	if pids, err := ListPids(); err != nil || !slices.Contains(pids, os.Getpid()) || !slices.Contains(pids, os.Getppid()) {
		t.Errorf("ListPids() = %d pids, %v: this process or its parent is missing", len(pids), err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	if Alive(gone.Process.Pid) {
		t.Errorf("the reaped child %d is Alive", gone.Process.Pid)
	}
	if tm, err := ReadCPUTimes(); err != nil || tm.User+tm.System == 0 || tm.Idle == 0 {
		t.Errorf("ReadCPUTimes() = %+v, %v", tm, err)
	}
}

// TestControllerHierarchyAgreesWithMounts: a controller /proc/cgroups puts
// in a v1 hierarchy (id not 0) is an option of a cgroup v1 mount, and one
// it does not is no v1 mount's.
func TestControllerHierarchyAgreesWithMounts(t *testing.T) {
	mounts, err := Mounts()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range []string{"cpu", "cpuacct", "memory", "pids", "perf_event", "cpuset"} {
		id, ok := ControllerHierarchy(c)
		if !ok {
			continue
		}
		checked++
		mounted := false
		for _, m := range mounts {
			mounted = mounted || m.FSType == "cgroup" && m.HasOption(c)
		}
		if mounted != (id != "0") {
			t.Errorf("/proc/cgroups gives %s hierarchy %s; a v1 mount has it: %v", c, id, mounted)
		}
	}
	if checked == 0 {
		t.Skip("/proc/cgroups lists none of the controllers")
	}
}
