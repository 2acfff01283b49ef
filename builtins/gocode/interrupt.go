package gocode

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/traefik/yaegi/interp"
)

// Interrupting interpreted code. yaegi stops every running interpreted
// loop when the context of an EvalWithContext is cancelled (each frame
// checks a run id that the cancellation bumps), but it has no way to stop
// just a call. So on Ctrl-C during a call that ignores its context, the
// module evaluates a throwaway statement under an already cancelled
// context: the bump stops the stuck call too. Afterwards one more
// evaluation brings the module's run id up to date, or every later call
// would return zero values at once.
//
// yaegi reads a frame's cancellation channel without its lock while an
// evaluation writes it, so the interrupt waits a grace period first: a call
// that watches its context.Context returns by itself and is never raced.
// A call stuck in a loop that calls functions can still meet that race in
// yaegi; a stuck call is rare, and the alternative is a hung benchbook.

// grace is how long a call may take to return by itself after Ctrl-C.
const grace = 250 * time.Millisecond

// yaegi runs the throwaway statement on a goroutine of its own: it reads
// the run id and stores it in the module's root frame, then runs. Cancelled
// at once, that goroutine could store an id from before the bump after
// resync had refreshed it, on a box that preempted it in between; every
// later call then returned zero values at once (TestCallInterrupted: 7 in
// 20 under load). So the stopper first tells benchbook it runs (bbsys.Ran,
// after its id is stored) and waits there, in Go, until the bump is done;
// only then is its context cancelled. A stopper that starts too late finds
// its release closed and returns at once: nothing is left spinning.
const stopper = "bbsys.Ran()"

// stopperWait bounds the wait for the stopper to start.
const stopperWait = 2 * time.Second

// installStopper gives the module's interpreter bbsys.Ran.
func (m *Package) installStopper() error {
	m.ran = make(chan struct{}, 1)
	ran := func() {
		m.stopMu.Lock()
		release := m.release
		m.stopMu.Unlock()
		select {
		case m.ran <- struct{}{}:
		default:
		}
		if release != nil {
			<-release
		}
	}
	if err := m.interp.Use(interp.Exports{"bbsys/bbsys": {"Ran": reflect.ValueOf(ran)}}); err != nil {
		return fmt.Errorf("gocode: interrupt support: %w", err)
	}
	if _, err := m.interp.Eval(`import "bbsys"`); err != nil {
		return fmt.Errorf("gocode: interrupt support: %w", err)
	}
	return nil
}

// watch interrupts the interpreter if ctx is done before the returned stop
// is called; stop reports whether it did.
func (m *Package) watch(ctx context.Context) (stop func() (interrupted bool)) {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	done, finished := make(chan struct{}), make(chan struct{})
	var fired atomic.Bool
	go func() {
		defer close(finished)
		select {
		case <-done:
		case <-ctx.Done():
			select {
			case <-done:
			case <-time.After(grace):
				fired.Store(true)
				m.interrupt()
			}
		}
	}()
	return func() bool {
		close(done)
		<-finished
		if fired.Load() {
			m.resync()
		}
		return fired.Load()
	}
}

func (m *Package) interrupt() {
	release := make(chan struct{})
	m.stopMu.Lock()
	m.release = release
	m.stopMu.Unlock()
	defer close(release) // after the bump: the stopper may return
	select {
	case <-m.ran: // from an earlier stopper that started too late
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-m.ran:
		case <-time.After(stopperWait):
		}
		cancel()
	}()
	m.interp.EvalWithContext(ctx, stopper) //nolint:errcheck // it is meant to be cancelled
}

// resync makes the interpreter's frames current again after an interrupt.
func (m *Package) resync() {
	m.interp.EvalWithContext(context.Background(), "0") //nolint:errcheck // a constant cannot fail
	m.trace.take()
}
