package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Launcher starts agents: local processes, OpenSSH sessions, or the pods
// of a Kubernetes Job.
type Launcher interface {
	// Launch starts one agent per spec.
	Launch(ctx context.Context, specs []Spec) ([]*Agent, error)
	// Close removes whatever Launch left behind (processes, Jobs,
	// ConfigMaps); it is called once after every run, failed ones too.
	Close(ctx context.Context) error
}

// Agent is one started agent as the coordinator sees it.
type Agent struct {
	Name string
	// In takes the coordinator's messages; closing it stops the agent. Nil
	// for an agent that got its spec and start instant at launch.
	In io.WriteCloser
	// Out is the agent's message stream (stdout, or a pod's log).
	Out io.Reader
	// At is the start instant given at launch (with In nil), coordinator clock.
	At time.Time
	// Wait returns once the agent is gone; its error says how it ended
	// ("exit status 1: <stderr>", "lost its connection: ..."); safe to call
	// more than once.
	Wait func() error
	// Kill ends the agent now; safe to call more than once.
	Kill func()
	// Pid is the local process behind the agent (an ssh client for a
	// remote one); 0 for a pod.
	Pid int
	// Describe, if set, says what the launcher knows of an agent that went
	// silent ("pod Pending: Unschedulable: 0/3 nodes are available").
	Describe func() string
}

// Options shape a fleet run.
type Options struct {
	Warmup, Duration, Window, Timeout time.Duration
	// Hang: an agent from which nothing came for this long is hung (it
	// sends a heartbeat every second). Default 10 s.
	Hang time.Duration
	// AllowClockOffset runs even when an agent's clock is off by more than
	// a tenth of a window.
	AllowClockOffset bool
	// Progress receives the agents' progress lines, prefixed by their names.
	Progress io.Writer
	// OnStart, if set, is told the common start instant (this machine's
	// clock) once every agent has it: server-side observers sample around
	// the measurement window from it.
	OnStart func(at time.Time)
	// StartAt, if set, decides the start instant: it is given the
	// earliest this fleet can start at (fixed: the agents were launched
	// with theirs) and returns the one to use, no earlier, or why not
	// (workload.concurrent starts its scenarios, fleets or not, at one).
	StartAt func(earliest time.Time, fixed bool) (time.Time, error)
}

// Timing bounds of the protocol.
const (
	handshakeTimeout = 30 * time.Second // hello, clock answers
	stopGrace        = 3 * time.Second  // after stdin closes, time to report
	defaultHang      = 10 * time.Second
)

// Run launches one agent per spec, starts them at one instant, watches them
// and merges what they measured. A failed agent is named in the result,
// which is then incomplete; a failure before the start is an error.
func Run(ctx context.Context, l Launcher, specs []Spec, o Options) (*Merged, error) {
	if o.Hang <= 0 {
		o.Hang = defaultHang
	}
	agents, err := l.Launch(ctx, specs)
	defer closeLauncher(l)
	if err != nil {
		return nil, err
	}
	conns := make([]*conn, len(agents))
	var progress io.Writer
	if o.Progress != nil {
		progress = &lockedWriter{w: o.Progress}
	}
	for i, a := range agents {
		conns[i] = newConn(a, progress)
	}
	defer killAll(conns)
	at, err := agree(ctx, conns, specs, o)
	if err != nil {
		return nil, err
	}
	if o.OnStart != nil {
		o.OnStart(at)
	}
	outs := watchAll(ctx, conns, at, o)
	return Merge(outs, MergeOptions{Start: at.Add(o.Warmup), Window: o.Window, Duration: o.Duration})
}

// closeLauncher cleans up with a context of its own: Ctrl-C has cancelled
// the run's, and what was created must still be deleted.
func closeLauncher(l Launcher) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = l.Close(ctx)
}

func killAll(conns []*conn) {
	for _, c := range conns {
		c.a.Kill()
		_ = c.a.Wait()
	}
}

// agree does the handshake with every agent that has a stdin and sends
// them one start instant; agents started with theirs keep it.
func agree(ctx context.Context, conns []*conn, specs []Spec, o Options) (time.Time, error) {
	if len(conns) > 0 && conns[0].out == nil {
		at := conns[0].a.At
		if o.StartAt != nil {
			got, err := o.StartAt(at, true)
			if err != nil {
				return time.Time{}, err
			}
			if !got.Equal(at) {
				return time.Time{}, fmt.Errorf("the agents were launched with their start instant: they cannot start %s later", got.Sub(at))
			}
		}
		return at, nil
	}
	samples := make([]clockSample, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { samples[i], errs[i] = c.handshake(ctx, specs[i]) })
	}
	wg.Wait()
	var worst time.Duration
	for i, c := range conns {
		if errs[i] != nil {
			return time.Time{}, fmt.Errorf("agent %s: %w", c.a.Name, errs[i])
		}
		if err := checkOffset(c.a.Name, samples[i], o); err != nil {
			return time.Time{}, err
		}
		worst = max(worst, samples[i].delay())
	}
	// Far enough ahead that every start message arrives before it.
	at := time.Now().Add(200*time.Millisecond + 4*worst)
	if o.StartAt != nil {
		earliest := at
		var err error
		if at, err = o.StartAt(at, false); err != nil {
			return time.Time{}, err
		}
		if at.Before(earliest) {
			return time.Time{}, fmt.Errorf("start instant %s before the earliest the agents can start", earliest.Sub(at))
		}
	}
	for i, c := range conns {
		off := samples[i].offset()
		if err := c.out.send(Message{Type: "start", At: at.Add(off).UnixNano(), Offset: int64(off)}); err != nil {
			return time.Time{}, fmt.Errorf("agent %s: start: %w", c.a.Name, err)
		}
	}
	return at, nil
}

// checkOffset refuses a clock off by more than a tenth of a window: the
// agents' windows would no longer line up with each other.
func checkOffset(name string, s clockSample, o Options) error {
	off := s.offset()
	if o.AllowClockOffset || o.Window <= 0 || off.Abs() <= o.Window/10 {
		return nil
	}
	return fmt.Errorf("agent %s: its clock is %s off this machine's (round trip %s), more than a tenth of the %s window: "+
		"synchronise the clocks (chrony, systemd-timesyncd) or pass allow_clock_offset = True",
		name, off.Round(time.Microsecond), s.delay().Round(time.Microsecond), o.Window)
}

// watchAll follows every agent to its end.
func watchAll(ctx context.Context, conns []*conn, at time.Time, o Options) []Outcome {
	deadline := at.Add(o.Warmup + o.Duration + o.Timeout + o.Hang)
	outs := make([]Outcome, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			outs[i] = c.watch(ctx, at, deadline, o.Hang)
			if outs[i].Failure != "" {
				outs[i].At = time.Now()
			}
		})
	}
	wg.Wait()
	return outs
}

// conn is the coordinator's side of one agent.
type conn struct {
	a        *Agent
	out      *lineWriter // nil without stdin
	msgs     chan Message
	progress io.Writer
	readErr  error // set before msgs closes
}

func newConn(a *Agent, progress io.Writer) *conn {
	c := &conn{a: a, msgs: make(chan Message, 64), progress: progress}
	if a.In != nil {
		c.out = &lineWriter{w: a.In}
	}
	go c.read()
	return c
}

func (c *conn) read() {
	defer close(c.msgs)
	r := newLineReader(c.a.Out)
	for {
		m, err := r.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.readErr = err
			}
			return
		}
		c.msgs <- m
	}
}

// handshake: hello, spec, clock probes.
func (c *conn) handshake(ctx context.Context, spec Spec) (clockSample, error) {
	hello, err := c.await(ctx, "hello", handshakeTimeout)
	if err != nil {
		return clockSample{}, err
	}
	if hello.Version != Version {
		return clockSample{}, fmt.Errorf("speaks protocol %d, this benchbook %d: use the same build", hello.Version, Version)
	}
	if err := c.out.send(Message{Type: "spec", Spec: &spec}); err != nil {
		return clockSample{}, fmt.Errorf("spec: %w", err)
	}
	return c.measureClock(ctx)
}

// await returns the next message of type typ, passing progress along; an
// error message, the end of the stream or the timeout is an error.
func (c *conn) await(ctx context.Context, typ string, timeout time.Duration) (Message, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return Message{}, ctx.Err()
		case <-t.C:
			return Message{}, fmt.Errorf("no %s message within %s", typ, timeout)
		case m, ok := <-c.msgs:
			switch {
			case !ok:
				return Message{}, c.ended()
			case m.Type == typ:
				return m, nil
			case m.Type == "error":
				return Message{}, errors.New(m.Error)
			}
			c.show(m)
		}
	}
}

// ended describes an agent whose stream closed: how its process ended.
func (c *conn) ended() error {
	err := c.a.Wait()
	if err == nil {
		err = errors.New("exited without a result")
	}
	if c.readErr != nil {
		err = fmt.Errorf("%w (reading its output: %v)", err, c.readErr)
	}
	return err
}

func (c *conn) show(m Message) {
	if c.progress == nil {
		return
	}
	switch m.Type {
	case "progress", "noise":
		fmt.Fprintf(c.progress, "[%s] %s\n", c.a.Name, m.Line)
	}
}

// watch follows one agent from the start to its result or its failure.
func (c *conn) watch(ctx context.Context, at, deadline time.Time, hang time.Duration) Outcome {
	out := Outcome{Name: c.a.Name}
	// A pod may say nothing until it is scheduled and pulled, up to the start.
	silent := time.NewTimer(max(time.Until(at), 0) + hang)
	defer silent.Stop()
	over := time.NewTimer(time.Until(deadline))
	defer over.Stop()
	done, stopped := ctx.Done(), false
	// A heartbeat our way too: an agent that hears nothing for its spec's
	// Silence stops (its coordinator is gone or cut off).
	beat := time.NewTicker(time.Second)
	defer beat.Stop()
	for {
		select {
		case <-beat.C:
			if c.out != nil && !stopped {
				_ = c.out.send(Message{Type: "ping"})
			}
		case <-done:
			done, stopped = nil, true
			c.stop()
			over.Reset(stopGrace)
		case <-silent.C:
			out.Failure = fmt.Sprintf("hung: nothing from it for %s", hang)
			if c.a.Describe != nil {
				out.Failure += " (" + c.a.Describe() + ")"
			}
			c.a.Kill()
			return out
		case <-over.C:
			c.a.Kill()
			out.Failure = "hung: no result by the end of the run"
			if stopped {
				out.Failure = fmt.Sprintf("did not report within %s of Ctrl-C", stopGrace)
			}
			return out
		case m, ok := <-c.msgs:
			if !ok {
				out.Failure = describe(c.ended())
				return out
			}
			silent.Reset(hang)
			switch m.Type {
			case "result":
				c.finish()
				if !stopped && m.Result != nil && m.Result.Run != nil && m.Result.Run.Interrupted {
					// Someone else stopped it (SIGTERM: its pod deleted or
					// evicted, its box shutting down): its window is partial.
					out.Failure = "stopped before the end of the run by something other than this run (SIGTERM)"
					if c.a.Describe != nil {
						out.Failure += ": " + c.a.Describe()
					}
					return out
				}
				out.Report = m.Result
				return out
			case "error":
				c.a.Kill()
				out.Failure = "failed: " + m.Error
				return out
			}
			c.show(m)
		}
	}
}

// stop asks the agent to end: closing its stdin.
func (c *conn) stop() {
	if c.a.In != nil {
		_ = c.a.In.Close()
	} else {
		c.a.Kill()
	}
}

// finish lets a reporting agent exit, and makes sure it does.
func (c *conn) finish() {
	c.stop()
	done := make(chan struct{})
	go func() { _ = c.a.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGrace):
		c.a.Kill()
	}
}

// describe words an ended agent's error for the per-agent table.
func describe(err error) string {
	var lost *LostError
	if errors.As(err, &lost) {
		return "lost its connection: " + lost.Detail
	}
	return "died: " + err.Error()
}

// LostError is how a launcher says an agent's connection, not its process,
// failed (ssh's exit status 255).
type LostError struct{ Detail string }

func (e *LostError) Error() string { return "lost its connection: " + e.Detail }

// lockedWriter keeps the agents' progress lines whole when they interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
