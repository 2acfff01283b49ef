package procfs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestReadStatHostileName: a process whose command name holds spaces and
// parentheses ("x) 1 (y") is read right: its parent is this test (the
// kernel's own getppid from our side is the oracle), it sleeps, it is in
// our tree, and once it exited unreaped it is Dead and out of ReadProc.
func TestReadStatHostileName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "x) 1 (y")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "0.5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	st, err := ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != pid || st.PPID != os.Getpid() || st.Dead() || st.StartTime == 0 || st.Threads < 1 {
		t.Errorf("ReadStat(%d) = %+v, want parent %d, alive", pid, st, os.Getpid())
	}
	if !slices.Contains(TreePids(os.Getpid()), pid) {
		t.Errorf("the child %d is not in our tree %v", pid, TreePids(os.Getpid()))
	}
	// Wait for the exit without reaping: a zombie.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err = ReadStat(pid); err != nil || st.Dead() || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || st.State != 'Z' {
		t.Errorf("after its exit: %+v, %v; want a zombie", st, err)
	}
	if _, ok := ReadProc(pid); ok {
		t.Errorf("ReadProc takes the zombie %d for a live process", pid)
	}
	_ = cmd.Wait()
	if _, err := ReadStat(pid); !os.IsNotExist(err) {
		t.Errorf("after the reap: %v, want not-exist", err)
	}
}

// TestTicks: the tick is USER_HZ, what getconf says here.
func TestTicks(t *testing.T) {
	if Ticks(150) != 1500*time.Millisecond {
		t.Errorf("150 ticks = %v", Ticks(150))
	}
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		t.Skip("no getconf")
	}
	if got := string(out); got != "100\n" {
		t.Errorf("getconf CLK_TCK = %q, TicksPerSecond = %d", got, TicksPerSecond)
	}
}

// TestArgsEnvironCwdOfAChild: a child's arguments (with spaces, an empty
// one, one ending the list empty), environment and working directory are
// what exec.Cmd gave it.
func TestArgsEnvironCwdOfAChild(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command(sh, "-c", "echo ready; read x", "name", "a b  c", "", "d\te", "")
	cmd.Env = []string{"A=1", "WITH SPACE=x y", "EMPTY=", "EQ=a=b"}
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	// Start returns once the exec began: the kernel sets the new
	// program's arguments a moment later (cmdline read empty in a race
	// pass). The child's first line says its exec is done.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if got, err := Args(pid); err != nil || !slices.Equal(got, cmd.Args) {
		t.Errorf("Args = %q, %v; want %q", got, err, cmd.Args)
	}
	if got, err := Environ(pid); err != nil || !slices.Equal(got, cmd.Env) {
		t.Errorf("Environ = %q, %v; want %q", got, err, cmd.Env)
	}
	want, _ := filepath.EvalSymlinks(cmd.Dir)
	if got, err := Cwd(pid); err != nil || got != want {
		t.Errorf("Cwd = %q, %v; want %q", got, err, want)
	}
	if got, err := Args(1 << 30); err == nil || got != nil {
		t.Errorf("Args of no process = %q, %v", got, err)
	}
	if got := splitNUL([]byte("no\x00end")); !slices.Equal(got, []string{"no", "end"}) {
		t.Errorf("splitNUL without the last NUL = %q", got)
	}
}
