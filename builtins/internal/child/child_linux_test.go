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
