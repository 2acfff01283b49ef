package child

import (
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/runtime/procfs"
)

// Supervisor is the hidden mode that turns this binary into the
// supervisor of a benchbook's children ("__supervise MARKER DIR").
var Supervisor = Mode{Arg: "__supervise", Run: supervise}

// reapFor bounds the supervisor's work after benchbook died: a child that
// forks faster than we kill would otherwise keep it busy for ever.
const reapFor = 10 * time.Second

// startSupervisor re-executes this binary as the supervisor of marker and
// the cgroup dir (if any) and returns the pipe's write end. The supervisor is
// first cloned into dir's "supervisor" cgroup, which also proves that
// children can be cloned into cgroups here; when that fails it is started
// without, and inCgroup is false.
func startSupervisor(marker, dir string) (pipe *os.File, inCgroup bool, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, false, err
	}
	defer r.Close() // the supervisor has its copy; ours would hide benchbook's death
	if dir != "" && spawnSupervisor(r, marker, dir) == nil {
		return w, true, nil
	}
	if err := spawnSupervisor(r, marker, ""); err != nil {
		w.Close()
		return nil, false, err
	}
	return w, false, nil
}

func spawnSupervisor(r *os.File, marker, dir string) error {
	arg := "-"
	var cgroup *os.File
	if dir != "" {
		f, err := os.Open(filepath.Join(dir, "supervisor"))
		if err != nil {
			return err
		}
		defer f.Close()
		cgroup, arg = f, dir
	}
	cmd, err := ModeCommand(Supervisor.Arg, marker, arg)
	if err != nil {
		return err
	}
	if cgroup != nil {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(cgroup.Fd())
	}
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// supervise is the supervisor's whole life: leave the probe cgroup, wait
// for EOF on stdin (benchbook is gone), kill what is left, exit.
func supervise(args []string) {
	if len(args) == 0 {
		os.Exit(2)
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	marker, dir := args[0], ""
	if len(args) > 1 && args[1] != "-" {
		dir = args[1]
		// Back to benchbook's own cgroup, so the probe cgroup can go now
		// and our own kill of the children's cgroup can never hit us.
		_ = os.WriteFile(filepath.Join(filepath.Dir(dir), "cgroup.procs"), []byte("0"), 0)
		_ = os.Remove(filepath.Join(dir, "supervisor"))
	}
	var seen *tree
	if dir == "" { // no cgroup holds the descendants: remember them
		seen = newTree(marker)
	}
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	if seen != nil {
		tick := time.NewTicker(walkEvery)
	watch:
		for {
			select {
			case <-eof:
				break watch
			case <-tick.C:
				seen.walk()
			}
		}
		tick.Stop()
	}
	<-eof
	reap(marker, dir, seen)
	os.Exit(0)
}

// reap kills, until none is left or reapFor passed, every process in the
// children's cgroup, every process whose environment holds marker and
// every process of seen still running (and its children), then removes the
// cgroup.
func reap(marker, dir string, seen *tree) {
	deadline := time.Now().Add(reapFor)
	for time.Now().Before(deadline) {
		n := 0
		if dir != "" {
			n += killCgroup(childrenDir(dir))
		}
		if seen != nil {
			n += seen.kill()
		}
		for _, pid := range markedPids(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
		if n == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	removeCgroup(dir)
}

// killCgroup kills every process in the cgroup (cgroup.kill, or one by one
// on kernels before 5.14) and returns how many there were.
func killCgroup(dir string) int {
	pids := cgroupPids(dir)
	if len(pids) == 0 {
		return 0
	}
	if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) != nil {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return len(pids)
}

// cgroupPids lists the live processes of a cgroup. A zombie (killed, not
// yet reaped by init, which can be slow) is dead: killing it again would
// keep the reaper busy for nothing.
func cgroupPids(dir string) []int {
	data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func zombie(pid int) bool {
	st, err := procfs.ReadStat(pid)
	return err != nil || st.Dead() // an error: gone already
}

// markedPids lists the live processes whose environment holds marker.
// (PostgreSQL overwrites its environment with its process title, so its
// processes are found by the cgroup, or die with their postmaster.)
func markedPids(marker string) []int {
	self := os.Getpid()
	var pids []int
	for _, pid := range procfs.Pids() {
		if env, _ := procfs.Environ(pid); pid != self && slices.Contains(env, marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// makeCgroup creates name, with "children" and "supervisor" under it, in
// this process's cgroup v2 directory; "" when cgroup v2 is not mounted or
// not writable (not root, say).
func makeCgroup(name string) string {
	mnt, own := cgroup2Mount(), ownCgroup()
	if mnt == "" || own == "" {
		return ""
	}
	removeStale(filepath.Join(mnt, own))
	dir := filepath.Join(mnt, own, name)
	if os.Mkdir(dir, 0o755) != nil {
		return ""
	}
	if os.Mkdir(childrenDir(dir), 0o755) != nil || os.Mkdir(filepath.Join(dir, "supervisor"), 0o755) != nil {
		removeCgroup(dir)
		return ""
	}
	return dir
}

// removeStale removes the empty cgroups of benchbooks that are gone for
// sure (their supervisor gave up waiting for init to reap a zombie); a
// cgroup still holding a process is left alone (rmdir refuses it), and so
// is one whose owner was counted in another pid namespace: from inside
// one, a live benchbook outside it has no pid, and its children's cgroup
// is empty between two starts (removed, its next child failed to start
// with ENOENT).
func removeStale(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "benchbook-*-*-*"))
	for _, d := range dirs {
		f := strings.Split(filepath.Base(d), "-") // benchbook, pid, pid namespace, random
		pid, err := strconv.Atoi(f[1])
		if err != nil || len(f) != 4 || !procfs.OwnerGone(pid, f[2]) {
			continue
		}
		removeTree(d)
	}
}

func childrenDir(dir string) string { return filepath.Join(dir, "children") }

// removeCgroup removes dir and every cgroup under it, deepest first (rmdir
// succeeds only on empty cgroups, which is what we want). Under children
// there may be the cgroups of benchbooks we ran (fleet agents), whose
// supervisors died with our cgroup.kill.
func removeCgroup(dir string) {
	if dir == "" {
		return
	}
	deadline := time.Now().Add(reapFor)
	for {
		// A killed process leaves its cgroup when it is reaped: a moment
		// after SIGKILL, or later when init is slow to reap its zombies.
		if removeTree(dir) || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// removeTree rmdirs every directory under dir, deepest first, then dir;
// it says whether dir is gone.
func removeTree(dir string) bool {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
	_, err := os.Stat(dir)
	return os.IsNotExist(err)
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted
// (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid systems).
func cgroup2Mount() string {
	mounts, _ := procfs.Mounts()
	for _, m := range mounts {
		if m.FSType == "cgroup2" && m.Root == "/" {
			return m.Point
		}
	}
	return ""
}

// ownCgroup is this process's path in the cgroup v2 hierarchy ("0::/path").
func ownCgroup() string {
	lines, err := procfs.Cgroups(0)
	if err != nil {
		return ""
	}
	return procfs.V2Path(lines)
}
