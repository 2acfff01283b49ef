package postgres

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/runtime/limits"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// clearStaleLocks removes the lock files (postmaster.pid in the data dir,
// .s.PGSQL.PORT.lock in the socket dir) of a postmaster that is gone: no
// such process, a zombie (killed with benchbook, not yet reaped by PID 1:
// PostgreSQL's own check, kill(pid, 0), takes it for alive and refused to
// start for about 2 s after a SIGKILL), or a pid reused by a process that
// is no postmaster of this data dir. A live postmaster of it (another
// benchbook running the notebook, one started by hand) keeps its files,
// and PostgreSQL says so.
func (c *cluster) clearStaleLocks() {
	locks := []string{filepath.Join(c.dataDir(), "postmaster.pid")}
	if c.sockDir != "" {
		found, _ := filepath.Glob(filepath.Join(c.sockDir, ".s.PGSQL.*.lock"))
		locks = append(locks, found...)
	}
	for _, f := range locks {
		if pid := lockPid(f); pid > 0 && !livePostmaster(pid, c.dataDir()) {
			os.Remove(f)
		}
	}
}

// lockPid is the pid on a lock file's first line (negative for a
// postmaster in single-user mode), 0 when there is none.
func lockPid(path string) int {
	data, err := limits.ReadFile(path, limits.File)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0
	}
	if pid < 0 {
		pid = -pid
	}
	return pid
}

// livePostmaster says whether pid runs, is no zombie, and works in
// dataDir (a postmaster's working directory is its data dir). When that
// cannot be read (another user's process, benchbook not root), it is
// taken to be one: a lock is only ever removed for sure.
func livePostmaster(pid int, dataDir string) bool {
	st, err := procfs.ReadStat(pid)
	if err != nil || st.Dead() {
		return false
	}
	cwd, err := procfs.Cwd(pid)
	if err != nil {
		return !os.IsNotExist(err)
	}
	want, err := filepath.EvalSymlinks(dataDir)
	if err != nil {
		want = dataDir
	}
	return cwd == want || cwd == dataDir
}
