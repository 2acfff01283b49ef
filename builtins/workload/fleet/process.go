package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/benchbook/benchbook/builtins/internal/child"
)

// procAgent runs an agent as a child process speaking on its stdin and
// stdout: a local agent, or the ssh client of a remote one.
type procAgent struct {
	cmd    *exec.Cmd
	stderr *tailBuffer
	once   sync.Once
	err    error
	// classify turns the process's exit into the agent's failure (ssh's
	// 255 is a lost connection); nil keeps it as is.
	classify func(error, string) error
}

// startProc starts cmd through benchbook's one spawn path, so the agent's
// process (an ssh client too) dies with benchbook.
func startProc(name string, cmd *exec.Cmd, classify func(error, string) error) (*Agent, error) {
	p := &procAgent{cmd: cmd, stderr: &tailBuffer{max: 4096}, classify: classify}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := child.Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return &Agent{Name: name, In: in, Out: out, Wait: p.wait, Kill: p.kill, Pid: cmd.Process.Pid}, nil
}

func (p *procAgent) wait() error {
	p.once.Do(func() {
		err := p.cmd.Wait()
		tail := strings.TrimSpace(p.stderr.String())
		if err != nil && p.classify != nil {
			err = p.classify(err, tail)
		} else if err != nil && tail != "" {
			err = fmt.Errorf("%w: %s", err, lastLine(tail))
		}
		p.err = err
	})
	return p.err
}

func (p *procAgent) kill() {
	if p.cmd.Process != nil {
		child.KillGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killAgents ends agents started before a launch failed.
func killAgents(agents []*Agent) {
	for _, a := range agents {
		a.Kill()
		_ = a.Wait()
	}
}

// noClose is the Close of a launcher whose agents are processes: the
// coordinator kills and waits for them itself.
type noClose struct{}

func (noClose) Close(context.Context) error { return nil }

// tailBuffer keeps the last max bytes written: an agent's stderr, for the
// message that names why it died.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.ToValidUTF8(t.b, nil))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
