package profile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/child"
	"github.com/benchbook/benchbook/runtime/procfs"
)

// perfProc is one perf record process. It writes its data to a pipe (perf
// record -o -) that this process holds in memory, bounded, so no perf.data
// file exists at any time, and takes "enable"/"disable" on a control pipe
// (--control fd:), so sampling starts and stops exactly where the window
// does however long perf takes to start.
type perfProc struct {
	cmd    *exec.Cmd
	ctlMu  sync.Mutex
	ctl    *os.File // we write commands
	ack    *bufio.Reader
	ackF   *os.File
	out    *capBuffer
	stderr *capBuffer
	exited chan struct{} // closed when perf has exited and its output is read
	err    error         // Wait's, once exited

	enabledAt time.Time
	startTick int64 // uptime ticks just before sampling was enabled, its events open
}

// Handshake and stop bounds: perf record -a on a busy box takes a while to
// list every process before it reads its control pipe.
const (
	enableTimeout = 20 * time.Second
	stopTimeout   = 10 * time.Second
)

// startPerfProc starts perf record with args (which lack the control and
// output options) and returns once sampling is enabled, or with enable
// false once perf has its events open with sampling still off (a "ping"
// acknowledged: perf reads its control pipe only then).
func startPerfProc(bin string, args []string, maxBytes int64, enable bool) (*perfProc, error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	full := append([]string{"record", "-o", "-", "-D", "-1", "--control", "fd:3,4"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.ExtraFiles = []*os.File{ctlR, ackW}
	// LC_ALL=C keeps perf's messages, which errors are classified by, in
	// English.
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	p := &perfProc{cmd: cmd, ctl: ctlW, ackF: ackR, ack: bufio.NewReader(ackR),
		out: &capBuffer{max: maxBytes}, stderr: &capBuffer{max: 64 << 10}, exited: make(chan struct{})}
	p.out.onFull = func() { go p.command("disable", stopTimeout) }
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = child.Start(cmd)
	}
	ctlR.Close()
	ackW.Close()
	if err != nil {
		ctlW.Close()
		ackR.Close()
		return nil, err
	}
	go func() {
		_, _ = io.Copy(p.out, stdout)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	// perf reads its control pipe only once its events are open, and a
	// process forked after that inherits them: a start time after this
	// tick is a process perf follows.
	tick, _ := uptimeTicks()
	handshake := "ping"
	if enable {
		handshake = "enable"
	}
	if err := p.command(handshake, enableTimeout); err != nil {
		p.kill()
		return nil, p.failure(err)
	}
	p.enabledAt = time.Now()
	p.startTick = tick
	return p, nil
}

// command sends a control command and waits for perf's "ack".
func (p *perfProc) command(cmd string, timeout time.Duration) error {
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	select {
	case <-p.exited:
		return errPerfExited
	default:
	}
	if _, err := p.ctl.WriteString(cmd + "\n"); err != nil {
		return errPerfExited
	}
	_ = p.ackF.SetReadDeadline(time.Now().Add(timeout))
	line, err := p.ack.ReadString('\n')
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("perf did not acknowledge %q within %s", cmd, timeout)
		}
		return errPerfExited
	}
	// perf writes its tag with the C string's NUL ("ack\n\x00"), which
	// then starts the next answer.
	if ans := strings.Trim(line, "\x00 \n"); ans != "ack" {
		return fmt.Errorf("perf answered %q to %q", ans, cmd)
	}
	return nil
}

var errPerfExited = errors.New("perf exited")

// failure is why perf could not start sampling, from what it printed.
func (p *perfProc) failure(err error) error {
	<-p.exited
	msg := strings.TrimSpace(p.stderr.String())
	return classifyPerfError(msg, err)
}

// stop disables sampling (when not done already) then interrupts perf,
// which writes the rest of its data and exits; a perf that does not is
// killed.
func (p *perfProc) disable() {
	_ = p.command("disable", stopTimeout)
}

func (p *perfProc) finish() error {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		p.kill()
		return fmt.Errorf("perf did not exit within %s of SIGINT: killed, its samples are lost", stopTimeout)
	}
	p.ctl.Close()
	p.ackF.Close()
	// perf re-raises the SIGINT it handled once its data is written.
	var ee *exec.ExitError
	if p.err != nil && !(errors.As(p.err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT) {
		if msg := strings.TrimSpace(p.stderr.String()); msg != "" {
			return classifyPerfError(msg, p.err)
		}
	}
	return nil
}

func (p *perfProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.ctl.Close()
	p.ackF.Close()
}

// classifyPerfError turns what perf printed into an error a user can act on.
func classifyPerfError(msg string, err error) error {
	switch {
	case strings.Contains(msg, "perf_event_paranoid"):
		return fmt.Errorf("profile: the kernel forbids this sampling: kernel.perf_event_paranoid = %s; run benchbook as root, or lower it (sysctl -w kernel.perf_event_paranoid=1; -1 for cgroup targets)", paranoid())
	case strings.Contains(msg, "not found for kernel") || strings.Contains(msg, "linux-perf"):
		return fmt.Errorf("profile: perf does not match the running kernel (install Debian's linux-perf package for it): %s", lastLines(msg, 3))
	case strings.Contains(msg, "No such process"):
		return fmt.Errorf("profile: a process of the target exited before perf reached it: %w", errVanished)
	}
	if msg == "" {
		return fmt.Errorf("profile: perf record: %w", err)
	}
	return fmt.Errorf("profile: perf record: %w: %s", err, lastLines(msg, 5))
}

var errVanished = errors.New("no such process")

// paranoid is kernel.perf_event_paranoid's current value, "unknown" when
// it cannot be read.
func paranoid() string {
	v, err := procfs.Sysctl("kernel.perf_event_paranoid")
	if err != nil {
		return "unknown"
	}
	return v
}

// paranoidLevel is paranoid() as a number, 2 (the kernel's default) when
// it cannot be read.
func paranoidLevel() int {
	n, err := strconv.Atoi(paranoid())
	if err != nil {
		return 2
	}
	return n
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// script runs perf script on the data perf record wrote and hands each
// sample to fn. It returns perf script's complaints about lost events.
func script(ctx context.Context, bin string, data []byte, defaultPeriodNs int64, fn func(*sample)) (warnings []string, err error) {
	cmd := exec.CommandContext(ctx, bin, "script", "-i", "-", "-F", ScriptFields)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Stdin = bytes.NewReader(data)
	errb := &capBuffer{max: 64 << 10}
	cmd.Stderr = errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := child.Start(cmd); err != nil {
		return nil, fmt.Errorf("profile: perf script: %w", err)
	}
	perr := parseScript(stdout, defaultPeriodNs, fn)
	_, _ = io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	if perr != nil {
		return nil, fmt.Errorf("profile: %w", perr)
	}
	if werr != nil {
		return nil, fmt.Errorf("profile: perf script: %w: %s", werr, lastLines(errb.String(), 5))
	}
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, "lost") {
			warnings = append(warnings, "perf: "+strings.TrimSpace(l))
		}
	}
	return warnings, nil
}

// capBuffer keeps the first max bytes written to it and counts the rest;
// onFull runs once when it is seven eighths full, so a perf told to stop
// sampling then has room for what it still writes and the stream is not
// cut inside an event.
type capBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int64
	dropped int64
	onFull  func()
	full    bool
}

func (c *capBuffer) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.full && int64(c.buf.Len()+len(b)) >= c.max-c.max/8 {
		c.full = true
		if c.onFull != nil {
			c.onFull()
		}
	}
	room := c.max - int64(c.buf.Len())
	if room >= int64(len(b)) {
		c.buf.Write(b)
		return len(b), nil
	}
	if room > 0 {
		c.buf.Write(b[:room])
	}
	c.dropped += int64(len(b)) - max(room, 0)
	return len(b), nil
}

func (c *capBuffer) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}

func (c *capBuffer) String() string { return string(c.Bytes()) }

func (c *capBuffer) Full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.full
}
