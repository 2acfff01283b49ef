package kit

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// This file holds what the backends' children share: they start through
// child.Start (their own process group, dying with benchbook even on a
// SIGKILL of it), stop through StopChild, and their output goes to a ring
// of recent lines for errors and .logs().

// StopChild asks the group to stop with sig, waits up to grace for done
// to close, then kills the group.
func StopChild(pid int, sig syscall.Signal, grace time.Duration, done <-chan struct{}) {
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

// LogRing keeps the last lines a child wrote; it is the child's stdout and
// stderr. Waiters are woken on every write (for "log:REGEX" readiness).
// It holds at most max lines of at most MaxLogLine bytes: a child that
// floods its output without a newline (cat /dev/zero) used to grow the
// partial line until benchbook ran out of memory.
type LogRing struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	cutting bool // the partial line passed MaxLogLine: drop the rest of it
	max     int
	seq     int64 // complete lines ever written, for followers (Since)
	changed chan struct{}
}

// MaxLogLine is the longest line a LogRing keeps; the rest is cut.
const MaxLogLine = 4096

// NewLogRing returns a ring of max lines.
func NewLogRing(max int) *LogRing {
	return &LogRing{max: max, changed: make(chan struct{})}
}

func (r *LogRing) Write(p []byte) (int, error) {
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

// add appends to the partial line what fits in MaxLogLine.
func (r *LogRing) add(chunk []byte) {
	if room := MaxLogLine - len(r.partial); len(chunk) > room {
		chunk, r.cutting = chunk[:room], true
	}
	r.partial = append(r.partial, chunk...)
}

func (r *LogRing) endLine() {
	line := string(r.partial)
	if r.cutting {
		line += fmt.Sprintf(" … (line cut at %d bytes)", MaxLogLine)
	}
	r.lines = append(r.lines, line)
	r.partial, r.cutting = r.partial[:0], false
	r.seq++
}

// Tail returns the last n lines (all when n <= 0), including a partial line.
func (r *LogRing) Tail(n int) []string {
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

// Since returns the complete lines written after the seq'th, as many as
// the ring still holds, and the seq to ask from next.
func (r *LogRing) Since(seq int64) ([]string, int64) {
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
func (r *LogRing) held() []string {
	return r.lines[max(0, len(r.lines)-r.max):]
}

// Wait returns a channel closed at the next write.
func (r *LogRing) Wait() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// Follow gives the lines a log gets from now on, for a guard; none when
// there is no log.
func Follow(log *LogRing) guard.Lines {
	if log == nil {
		return func() []string { return nil }
	}
	_, seq := log.Since(math.MaxInt64)
	return func() []string {
		var lines []string
		lines, seq = log.Since(seq)
		return lines
	}
}

// FollowFile returns the complete lines appended to path since the last
// call, starting from its current end.
func FollowFile(path string) guard.Lines {
	var offset int64
	if fi, err := os.Stat(path); err == nil {
		offset = fi.Size()
	}
	return func() []string {
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil
		}
		data, _ := io.ReadAll(io.LimitReader(f, 64<<20))
		end := strings.LastIndexByte(string(data), '\n')
		if end < 0 {
			return nil
		}
		offset += int64(end + 1)
		return strings.Split(string(data[:end]), "\n")
	}
}

// Indent formats log lines for an error message.
func Indent(lines []string) string {
	if len(lines) == 0 {
		return "  (no output)"
	}
	return "  " + strings.Join(lines, "\n  ")
}
