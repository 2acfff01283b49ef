package child

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// A child's grandchild that left its process group still carries the
// marker, and a child is in this process's cgroup where cgroup v2 is
// writable.
func TestStartMarksAndGroups(t *testing.T) {
	cmd := exec.Command("sh", "-c", "setsid sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer KillGroup(cmd.Process.Pid, syscall.SIGKILL)
	if g.pipe == nil {
		t.Error("no supervisor: the test binary was not re-executed as one (TestMain runs its mode)")
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	grand := strings.TrimSpace(line)
	time.Sleep(100 * time.Millisecond) // until sleep has exec'd
	env, err := os.ReadFile(filepath.Join("/proc", grand, "environ"))
	if err != nil || !strings.Contains(string(env), Marker()+"\x00") {
		t.Fatalf("grandchild %q lacks %q: %v", grand, Marker(), err)
	}
	pids := markedPids(Marker())
	found := false
	for _, p := range pids {
		found = found || filepath.Base(grand) == itoa(p)
	}
	if !found {
		t.Errorf("markedPids %v misses the grandchild %s", pids, grand)
	}
	if g.cgroup != nil {
		cg, _ := os.ReadFile(filepath.Join("/proc", grand, "cgroup"))
		if !strings.Contains(string(cg), "/benchbook-") {
			t.Errorf("grandchild's cgroup: %s", cg)
		}
	}
	for _, p := range pids {
		_ = killPid(p)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// TestRemoveStaleIsSure: an empty benchbook cgroup whose owner's pid runs
// no more in this pid namespace is removed; one whose pid was counted in
// another namespace is kept (from inside a namespace, a live benchbook
// outside has no pid: a sweep there removed its children's cgroup between
// two starts, and its next child failed with ENOENT), and so is a live one.
func TestRemoveStaleIsSure(t *testing.T) {
	mnt, own := cgroup2Mount(), ownCgroup()
	if mnt == "" || own == "" || os.Geteuid() != 0 {
		t.Skip("needs a writable cgroup v2 (root)")
	}
	parent := filepath.Join(mnt, own)
	ns := procfs.PidNamespace()
	dead := filepath.Join(parent, "benchbook-2147480000-"+ns+"-test")
	elsewhere := filepath.Join(parent, "benchbook-2147480000-1-test")
	live := filepath.Join(parent, "benchbook-"+itoa(os.Getpid())+"-"+ns+"-test")
	for _, d := range []string{dead, elsewhere, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Skipf("cannot make a cgroup here: %v", err)
		}
		if err := os.Mkdir(childrenDir(d), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeTree(d) })
	}
	removeStale(parent)
	if _, err := os.Stat(dead); err == nil {
		t.Errorf("%s: the empty cgroup of a gone owner was kept", dead)
	}
	for _, d := range []string{elsewhere, live} {
		if _, err := os.Stat(childrenDir(d)); err != nil {
			t.Errorf("%s: removed: %v", d, err)
		}
	}
}
