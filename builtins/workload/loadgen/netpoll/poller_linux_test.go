package netpoll

import (
	"fmt"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/benchbook/benchbook/runtime/hostinfo"
	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// TestWaitForPrecision: both ways WaitFor sleeps (epoll_pwait2's timespec,
// and the timerfd where it is missing) wake after the asked time and well
// before the next whole millisecond that epoll_wait's timeout would round
// to: the open loop's requests leave on time, not up to 1 ms late.
//
// It runs in the timing step (without -race, one package at a time); at
// load >= cores a batch with too many late wake-ups is tried again, up to 3 times; early
// ones and the wrong wait are errors at once.
func TestWaitForPrecision(t *testing.T) {
	timing.Only(t, "wake-up precision to 0.6 ms: the race pass's load woke 16 of 50 late")
	defer noPwait2.Store(noPwait2.Load())
	for attempt := 1; ; attempt++ {
		late := waitForPrecision(t)
		load, _ := hostinfo.LoadAvg()
		if len(late) == 0 || attempt == 3 || load[0] < float64(goruntime.NumCPU()) {
			for _, e := range late {
				t.Error(e)
			}
			return
		}
		t.Logf("attempt %d at load %.1f on %d cores: %q; again", attempt, load[0], goruntime.NumCPU(), late)
	}
}

// waitForPrecision measures 50 waits each way and returns how too many
// woke late.
func waitForPrecision(t *testing.T) (lateErrs []string) {
	for _, timerfd := range []bool{false, true} {
		noPwait2.Store(timerfd)
		p, err := NewPoller(1)
		if err != nil {
			t.Fatal(err)
		}
		const d = 300 * time.Microsecond
		var early, late []time.Duration
		for range 50 {
			start := time.Now()
			p.WaitFor(d, WaitEvents)
			if el := time.Since(start); el < d-10*time.Microsecond {
				early = append(early, el)
			} else if el > d+600*time.Microsecond {
				late = append(late, el)
			}
		}
		usedTimer := p.timer >= 0
		p.Close()
		// A signal (Go's preemption, SIGURG) ends a wait early with EINTR,
		// after which the loop computes its wake-up again; a loaded machine
		// under -race sees a few. A wrong unit or clock would end them all.
		if len(early) > 10 {
			t.Errorf("timerfd %v: %d of 50 waits of %s returned early: %v", timerfd, len(early), d, early)
		}
		// A loaded machine delays some wake-ups; most must be on time.
		if len(late) > 15 {
			lateErrs = append(lateErrs, fmt.Sprintf("timerfd %v: %d of 50 waits of %s took over 0.9 ms: %v", timerfd, len(late), d, late))
		}
		if usedTimer != timerfd {
			t.Errorf("timerfd %v: the poller's timerfd was used: %v", timerfd, usedTimer)
		}
	}
	return lateErrs
}
