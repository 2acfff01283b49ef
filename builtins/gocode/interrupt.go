package gocode

import (
	"context"
	"sync/atomic"
	"time"
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

// stopper is a bounded busy loop, in case yaegi starts it after the
// cancellation (then the bump came first and the loop must end by itself).
const stopper = "for i := 0; i < 1000000; i++ {}"

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
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m.interp.EvalWithContext(ctx, stopper) //nolint:errcheck // it is meant to be cancelled
}

// resync makes the interpreter's frames current again after an interrupt.
func (m *Package) resync() {
	m.interp.EvalWithContext(context.Background(), "0") //nolint:errcheck // a constant cannot fail
	m.trace.take()
}
