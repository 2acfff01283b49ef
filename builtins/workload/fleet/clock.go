package fleet

import (
	"context"
	"fmt"
	"time"
)

// clockProbes is how many round trips estimate one agent's clock offset;
// the one with the shortest round trip wins, as NTP's clock filter keeps
// the sample least disturbed by queueing.
const clockProbes = 8

// clockSample is one NTP-style exchange: t0 sent, t1 received by the agent,
// t2 sent back by it, t3 received; all Unix ns on their own clocks.
type clockSample struct{ t0, t1, t2, t3 int64 }

// offset is the agent's clock minus the coordinator's, assuming symmetric paths.
func (s clockSample) offset() time.Duration {
	return time.Duration(((s.t1 - s.t0) + (s.t2 - s.t3)) / 2)
}

// delay is the round trip less the agent's own time.
func (s clockSample) delay() time.Duration {
	return time.Duration((s.t3 - s.t0) - (s.t2 - s.t1))
}

// bestSample is the sample with the least delay.
func bestSample(ss []clockSample) clockSample {
	best := ss[0]
	for _, s := range ss[1:] {
		if s.delay() < best.delay() {
			best = s
		}
	}
	return best
}

// measureClock runs the exchange with one agent over its stream.
func (c *conn) measureClock(ctx context.Context) (clockSample, error) {
	var ss []clockSample
	for range clockProbes {
		t0 := time.Now().UnixNano()
		if err := c.out.send(Message{Type: "clock", T0: t0}); err != nil {
			return clockSample{}, fmt.Errorf("clock probe: %w", err)
		}
		m, err := c.await(ctx, "clock", handshakeTimeout)
		if err != nil {
			return clockSample{}, fmt.Errorf("clock probe: %w", err)
		}
		if m.T0 != t0 {
			return clockSample{}, fmt.Errorf("clock probe: answer to another probe")
		}
		ss = append(ss, clockSample{t0, m.T1, m.T2, time.Now().UnixNano()})
	}
	return bestSample(ss), nil
}
