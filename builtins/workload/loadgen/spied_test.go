package loadgen_test

import (
	"context"
	"sync"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/builtins/workload/loadgen/h1wire"
)

// spied is an HTTP target that notes how the engine ran it: the event
// loops it asked for (NewLoop, nil ones left out) and the clients it made
// (NewClient: a goroutine's each, a worker or a closed loop's client).
type spied struct {
	*h1wire.HTTPTarget
	mu      sync.Mutex
	loops   []loadgen.Loop
	clients int
}

func spy(t *h1wire.HTTPTarget) *spied { return &spied{HTTPTarget: t} }

func (s *spied) NewLoop(n int) loadgen.Loop {
	l := s.HTTPTarget.NewLoop(n)
	if l != nil {
		s.mu.Lock()
		s.loops = append(s.loops, l)
		s.mu.Unlock()
	}
	return l
}

func (s *spied) NewClient() loadgen.Client {
	s.mu.Lock()
	s.clients++
	s.mu.Unlock()
	return s.HTTPTarget.NewClient()
}

// counts are the loops and the clients the engine made.
func (s *spied) counts() (loops, clients int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.loops), s.clients
}

// runWindow runs spec on tgt from a known instant and returns the result
// and its measurement window, [measureAt, end).
func runWindow(spec loadgen.Spec, tgt loadgen.Target) (res *loadgen.Result, measureAt, end time.Time) {
	start := time.Now().Add(20 * time.Millisecond)
	res = loadgen.RunConcurrent(context.Background(), nil, []loadgen.Scenario{{Spec: spec, Target: tgt}}, start)[0]
	measureAt = start.Add(spec.Warmup)
	return res, measureAt, measureAt.Add(spec.Duration)
}
