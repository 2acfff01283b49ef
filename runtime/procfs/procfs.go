// Package procfs reads what Linux's /proc says of a process, its threads
// (task.go) and its tree (tree.go), of the machine (system.go) and of its
// TCP sockets (net.go); the other packages read /proc through it (their
// tests may read it themselves, as an oracle).
//
// Every builtin that needs a process's parent, state, CPU time, resident
// size or start time reads it here: /proc/PID/stat has one parser (its
// command name may hold spaces and parentheses) and one clock tick.
package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TicksPerSecond is USER_HZ, the unit of /proc's CPU and start times: 100
// on every Linux architecture Go supports (reading sysconf would need cgo).
const TicksPerSecond = 100

// Ticks is n clock ticks as a duration.
func Ticks(n uint64) time.Duration {
	return time.Duration(n) * (time.Second / TicksPerSecond)
}

// Stat is the part of /proc/PID/stat benchbook reads; the comments give
// the field numbers of proc(5).
type Stat struct {
	PID            int
	State          byte   // 3: R, S, D, Z (zombie), X (dead), ...
	PPID           int    // 4
	UTime, STime   uint64 // 14, 15: CPU in user and kernel mode, in ticks
	CUTime, CSTime uint64 // 16, 17: the same of waited-for children
	Threads        int64  // 20
	StartTime      uint64 // 22: ticks after boot; with the pid, names one process
	RSS            int64  // 24: resident pages
}

// ReadStat reads /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from its last ')'.
func ReadStat(pid int) (Stat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 22 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(f))
	}
	p := statParser{f: f}
	st := Stat{PID: pid, State: f[0][0], PPID: int(p.int(4)),
		UTime: p.uint(14), STime: p.uint(15), CUTime: p.uint(16), CSTime: p.uint(17),
		Threads: p.int(20), StartTime: p.uint(22), RSS: p.int(24)}
	if p.err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, p.err)
	}
	return st, nil
}

// statParser reads fields by their proc(5) number, keeping the first error.
type statParser struct {
	f   []string
	err error
}

func (p *statParser) int(field int) int64 {
	n, err := strconv.ParseInt(p.f[field-3], 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("field %d: %w", field, err)
	}
	return n
}

func (p *statParser) uint(field int) uint64 {
	n, err := strconv.ParseUint(p.f[field-3], 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("field %d: %w", field, err)
	}
	return n
}

// Dead reports a zombie (exited, not yet reaped) or a dead process: one
// that runs no more whatever kill(pid, 0) says.
func (s Stat) Dead() bool { return s.State == 'Z' || s.State == 'X' }

// CPU is the process's own CPU time in user and kernel mode, by ticks.
func (s Stat) CPU() time.Duration { return Ticks(s.UTime + s.STime) }

// ChildCPU is the CPU time of its waited-for children.
func (s Stat) ChildCPU() time.Duration { return Ticks(s.CUTime + s.CSTime) }

// RSSKB is the resident size in kB.
func (s Stat) RSSKB() int64 { return s.RSS * int64(os.Getpagesize()) / 1024 }

// Pids lists the processes /proc shows now.
func Pids() []int {
	out, _ := ListPids()
	return out
}

// ListPids lists the processes /proc shows now, in its order, and the
// error that cut the listing short.
func ListPids() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out, err
}

// Cmdline is the process's command line, arguments joined by spaces (""
// when it cannot be read, or for a kernel thread).
func Cmdline(pid int) string {
	args, _ := Args(pid)
	return strings.TrimSpace(strings.Join(args, " "))
}

// Args is the process's command line as its arguments (/proc/PID/cmdline:
// each ends in a NUL, so an empty one or one holding spaces comes back as
// it was given); none for a kernel thread or a zombie. A process that
// rewrote its title (PostgreSQL's) shows what it wrote.
func Args(pid int) ([]string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return splitNUL(data), err
}

// Environ is the environment the process pid was started with
// (/proc/PID/environ), "NAME=value" entries; none when it is empty or
// unreadable (another user's process).
func Environ(pid int) ([]string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return splitNUL(data), err
}

// splitNUL splits NUL-terminated strings; a last one without its NUL is
// kept.
func splitNUL(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

// Cwd is the working directory of process pid, as the kernel links it
// (/proc/PID/cwd: symbolic links resolved).
func Cwd(pid int) (string, error) {
	return os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
}

// PidNamespace names this process's pid namespace by its inode, as
// /proc/self/ns/pid gives it ("4026531836"); "" when /proc does not say.
// A pid means a process only in the namespace it was counted in: a
// benchbook in another one (unshare --pid, a container sharing the host's
// cgroups) must not take a live owner's pid for a gone one.
func PidNamespace() string {
	pidNSOnce.Do(func() {
		link, err := PidNamespaceLink()
		if err == nil {
			pidNS = strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
		}
	})
	return pidNS
}

// PidNamespaceLink is /proc/self/ns/pid as the kernel links it
// ("pid:[4026531836]").
func PidNamespaceLink() (string, error) { return os.Readlink("/proc/self/ns/pid") }

var (
	pidNSOnce sync.Once
	pidNS     string
)

// OwnerGone says, for sure, that the process pid, counted in the pid
// namespace ns, runs no more: ns is this process's own and no process has
// that pid. Anything unsure (another or an unknown namespace) is not gone.
func OwnerGone(pid int, ns string) bool {
	own := PidNamespace()
	return pid > 0 && own != "" && ns == own && syscall.Kill(pid, 0) == syscall.ESRCH
}
