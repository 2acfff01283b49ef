package backend

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// This file holds what the backends' children share: they start through
// child.Start (their own process group, dying with benchbook even on a
// SIGKILL of it), stop through stopChild, and their output goes to a ring of
// recent lines for errors and .logs().

// account is the user a child runs as; nil means benchbook's own user.
type account struct {
	uid, gid uint32
	name     string
}

// credential runs a child as the account as (nil: as benchbook). Everything
// else about how a child starts is child.Start's.
func credential(as *account) *syscall.SysProcAttr {
	if as == nil {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: as.uid, Gid: as.gid}}
}

// unprivileged returns the account PostgreSQL runs as: "postgres" when we are
// root (initdb and postgres refuse root), nil otherwise.
func unprivileged() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs a 'postgres' user to run PostgreSQL as (apt-get install postgresql creates it): %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &account{uid: uint32(uid), gid: uint32(gid), name: u.Username}, nil
}

// chownTree gives dir and everything under it to as (no-op when as is nil).
func chownTree(dir string, as *account) error {
	if as == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(as.uid), int(as.gid))
	})
}

// openPath lets as traverse every ancestor of dir (adds o+x where missing,
// never read permission): a cache dir under a private home or t.TempDir()
// would otherwise be unreachable for the postgres user.
func openPath(dir string, as *account) error {
	if as == nil {
		return nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				return fmt.Errorf("let %s traverse %s: %w", as.name, d, err)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// stopChild asks the group to stop with sig, waits up to grace for done to
// close, then kills the group.
func stopChild(pid int, sig syscall.Signal, grace time.Duration, done <-chan struct{}) {
	child.KillGroup(pid, sig)
	select {
	case <-done:
	case <-time.After(grace):
	}
	child.KillGroup(pid, syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// logRing keeps the last lines a child wrote; it is the child's stdout and
// stderr. Waiters are woken on every write (for "log:REGEX" readiness).
// It holds at most max lines of at most maxLogLine bytes: a child that
// floods its output without a newline (cat /dev/zero) used to grow the
// partial line until benchbook ran out of memory.
type logRing struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	cutting bool // the partial line passed maxLogLine: drop the rest of it
	max     int
	seq     int64 // complete lines ever written, for followers (since)
	changed chan struct{}
}

// maxLogLine is the longest line a logRing keeps; the rest is cut.
const maxLogLine = 4096

func newLogRing(max int) *logRing {
	return &logRing{max: max, changed: make(chan struct{})}
}

func (r *logRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		r.add(chunk)
		if i < 0 {
			break
		}
		r.endLine()
		p = p[i+1:]
	}
	if len(r.lines) >= 2*r.max { // trimmed now and then, not copied on every write
		r.lines = append([]string(nil), r.held()...)
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return n, nil
}

// add appends to the partial line what fits in maxLogLine.
func (r *logRing) add(chunk []byte) {
	if room := maxLogLine - len(r.partial); len(chunk) > room {
		chunk, r.cutting = chunk[:room], true
	}
	r.partial = append(r.partial, chunk...)
}

func (r *logRing) endLine() {
	line := string(r.partial)
	if r.cutting {
		line += fmt.Sprintf(" … (line cut at %d bytes)", maxLogLine)
	}
	r.lines = append(r.lines, line)
	r.partial, r.cutting = r.partial[:0], false
	r.seq++
}

// tail returns the last n lines (all when n <= 0), including a partial line.
func (r *logRing) tail(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := r.held()
	if len(r.partial) > 0 {
		all = append(append([]string(nil), all...), string(r.partial))
	}
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return append([]string(nil), all...)
}

// since returns the complete lines written after the seq'th, as many as
// the ring still holds, and the seq to ask from next.
func (r *logRing) since(seq int64) ([]string, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held := r.held()
	n := min(r.seq-seq, int64(len(held)))
	if n <= 0 {
		return nil, r.seq
	}
	return append([]string(nil), held[int64(len(held))-n:]...), r.seq
}

// held is the last max complete lines: what the ring holds.
func (r *logRing) held() []string {
	return r.lines[max(0, len(r.lines)-r.max):]
}

// wait returns a channel closed at the next write.
func (r *logRing) wait() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// indent formats log lines for an error message.
func indent(lines []string) string {
	if len(lines) == 0 {
		return "  (no output)"
	}
	return "  " + strings.Join(lines, "\n  ")
}

// lookBin finds a PostgreSQL program: in the Debian directories first, then
// on PATH.
func lookBin(name string) (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- { // newest version first
		p := filepath.Join(dirs[i], name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", errors.New("PostgreSQL's " + name + " not found (apt-get install postgresql)")
}
