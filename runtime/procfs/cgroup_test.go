package procfs

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestParseCgroups: v1 lines with joined controllers, the v2 line, a path
// with a colon, and a line without two colons left out.
func TestParseCgroups(t *testing.T) {
	got := ParseCgroups("12:cpu,cpuacct:/docker/abc\n3:name=systemd:/a:b\nbroken\n0::/user.slice\n")
	want := []CgroupLine{{"12", "cpu,cpuacct", "/docker/abc"}, {"3", "name=systemd", "/a:b"}, {"0", "", "/user.slice"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCgroups = %+v, want %+v", got, want)
	}
	if p := V2Path(got); p != "/user.slice" {
		t.Errorf("V2Path = %q", p)
	}
}

// TestOwnV2CgroupHoldsThisProcess: this process's v2 path, under the
// cgroup2 mount, is a directory whose cgroup.procs lists this process;
// Cgroups(0) and Cgroups(own pid) agree.
func TestOwnV2CgroupHoldsThisProcess(t *testing.T) {
	self, err := Cgroups(0)
	if err != nil {
		t.Fatal(err)
	}
	byPid, err := Cgroups(os.Getpid())
	if err != nil || !reflect.DeepEqual(self, byPid) {
		t.Fatalf("Cgroups(0) = %+v; Cgroups(%d) = %+v, %v", self, os.Getpid(), byPid, err)
	}
	mounts, _ := Mounts()
	i := slices.IndexFunc(mounts, func(m Mount) bool { return m.FSType == "cgroup2" && m.Root == "/" })
	path := V2Path(self)
	if i < 0 || path == "" {
		t.Skip("no cgroup v2 hierarchy here")
	}
	data, err := os.ReadFile(filepath.Join(mounts[i].Point, path, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(data)), strconv.Itoa(os.Getpid())) {
		t.Errorf("%s%s/cgroup.procs does not list this process %d", mounts[i].Point, path, os.Getpid())
	}
}
