package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// RunFunc runs one agent's share of the load: it decodes spec.Load and
// prepares (connects, prepares statements), calls start, which returns the
// agreed instant on this agent's clock once it is known (or an error if
// the run was stopped before), drives the load from that instant (waiting
// for it: opening its window before it, so that the load starts at the
// instant itself and not a wake-up and a watch later) until its end or
// until ctx ends, writes its progress lines to progress, and returns what
// it measured. The caller supplies the generator a local workload runs, so
// an agent has no second one.
type RunFunc func(ctx context.Context, spec Spec, start func() (time.Time, error), progress io.Writer) (*Report, error)

// AgentOptions say where an agent reads and writes and what it runs.
type AgentOptions struct {
	In  io.Reader // the coordinator's messages; nil with Spec set
	Out io.Writer // this agent's messages
	Run RunFunc
	// Spec and At, when set, were given at launch (a Kubernetes pod reads
	// them from its ConfigMap): no handshake, no stdin.
	Spec *Spec
	At   time.Time
}

// now is the agent's clock, for its answers to clock probes.
var now = time.Now

// SetClock replaces the agent's clock: a test plays a machine whose clock
// is off with it.
func SetClock(f func() time.Time) { now = f }

// ErrSilent is why an agent stops when its coordinator went quiet.
var ErrSilent = errors.New("the coordinator went silent")

// Serve is `benchbook agent`: it says hello, takes a spec, answers clock
// probes, waits for the agreed start instant, runs the load while sending
// progress and a heartbeat, and ends with its result (or an error message).
// The load stops early when the coordinator closes stdin or goes silent.
func Serve(ctx context.Context, o AgentOptions) error {
	out := &lineWriter{w: o.Out}
	host, _ := os.Hostname()
	if err := out.send(Message{Type: "hello", Version: Version, Host: host}); err != nil {
		return err
	}
	a := &agent{out: out, host: host, spec: o.Spec, at: o.At}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if o.Spec == nil {
		if err := a.handshake(ctx, newLineReader(o.In), cancel); err != nil {
			_ = out.send(Message{Type: "error", Error: err.Error()})
			return err
		}
	}
	if a.spec.Version != Version {
		err := fmt.Errorf("agent speaks protocol %d, the coordinator %d: use the same benchbook build", Version, a.spec.Version)
		_ = out.send(Message{Type: "error", Error: err.Error()})
		return err
	}
	res, err := a.run(ctx, o.Run)
	if err != nil {
		_ = out.send(Message{Type: "error", Error: err.Error()})
		return err
	}
	return out.send(Message{Type: "result", Result: res})
}

type agent struct {
	out      *lineWriter
	host     string
	spec     *Spec
	at       time.Time
	offset   int64
	measured bool          // offset came from the coordinator's probes
	heard    chan struct{} // a message came from the coordinator
}

// handshake reads the spec, answers clock probes until the start message,
// then keeps reading in the background: EOF or silence cancels ctx.
func (a *agent) handshake(ctx context.Context, in *lineReader, cancel context.CancelCauseFunc) error {
	msgs := make(chan Message, 16)
	go func() {
		defer close(msgs)
		for {
			m, err := in.next()
			if err != nil {
				return
			}
			if m.Type == "clock" {
				m.T1 = now().UnixNano()
				m.T2 = now().UnixNano()
				_ = a.out.send(Message{Type: "clock", T0: m.T0, T1: m.T1, T2: m.T2})
			}
			msgs <- m
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case m, ok := <-msgs:
			if !ok {
				return errors.New("stdin closed before the start message")
			}
			switch m.Type {
			case "spec":
				a.spec = m.Spec
			case "start":
				if a.spec == nil {
					return errors.New("start before spec")
				}
				// The instant is on our clock as now() reads it; the timer
				// below runs on the real one.
				a.at, a.offset, a.measured = time.Now().Add(time.Unix(0, m.At).Sub(now())), m.Offset, true
				go a.listen(msgs, cancel)
				return nil
			}
		}
	}
}

// listen watches the coordinator after the start: stdin closed (Ctrl-C on
// the coordinator, or its death) or silence past spec.Silence stops the load.
func (a *agent) listen(msgs <-chan Message, cancel context.CancelCauseFunc) {
	silence := time.Duration(a.spec.Silence)
	if silence <= 0 {
		silence = 100 * 365 * 24 * time.Hour
	}
	t := time.NewTimer(silence)
	defer t.Stop()
	for {
		select {
		case _, ok := <-msgs:
			if !ok {
				cancel(context.Canceled)
				return
			}
			t.Reset(silence)
		case <-t.C:
			cancel(ErrSilent)
			return
		}
	}
}

// run waits for the start instant and runs the load with a heartbeat.
func (a *agent) run(ctx context.Context, run RunFunc) (*Report, error) {
	stop := a.heartbeat()
	defer stop()
	var late time.Duration
	start := func() (time.Time, error) {
		if ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("stopped before the start: %w", context.Cause(ctx))
		}
		late = time.Since(a.at) // ready after the instant: late by that much
		return a.at, nil
	}
	res, err := run(ctx, *a.spec, start, &progressWriter{out: a.out})
	if err != nil {
		return nil, err
	}
	if res == nil || res.Run == nil {
		return nil, errors.New("the load reported no run")
	}
	res.Host, res.ClockOffset, res.LateStart = a.host, a.offset, int64(max(late, 0))
	res.ClockMeasured = a.measured
	if errors.Is(context.Cause(ctx), ErrSilent) {
		res.Run.Warnings = append(res.Run.Warnings, "stopped early: "+ErrSilent.Error())
	}
	return res, nil
}

// heartbeat sends a ping every second, so the coordinator tells a quiet
// agent (waiting for its start, or with progress off) from a hung one.
func (a *agent) heartbeat() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = a.out.send(Message{Type: "ping"})
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// progressWriter turns the generator's progress lines into messages.
type progressWriter struct {
	out *lineWriter
	buf []byte
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexAny(string(p.buf), "\r\n")
		if i < 0 {
			return len(b), nil
		}
		line := strings.TrimSpace(strings.TrimPrefix(string(p.buf[:i]), "\033[K"))
		p.buf = p.buf[i+1:]
		if line != "" && line != "\033[K" {
			if err := p.out.send(Message{Type: "progress", Line: line}); err != nil {
				return 0, err
			}
		}
	}
}
