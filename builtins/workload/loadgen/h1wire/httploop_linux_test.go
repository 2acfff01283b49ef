package h1wire

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// TestHTTPLoopRedialsWithoutLeaks: a server that closes every connection
// after its response makes the closed loop dial once per request; each
// dial detaches the socket from Go's netpoller (a duplicate descriptor)
// and each close must close it, so the process holds as many descriptors
// after a thousand dials as before, and every request is counted once.
func TestHTTPLoopRedialsWithoutLeaks(t *testing.T) {
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		seen.Add(1)
		w.Header().Set("Connection", "close")
	}))
	defer srv.Close()
	tgt, err := NewHTTPTarget(HTTPSpec{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		d, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(d)
	}
	before := fds()
	s := &loopsOf{HTTPTarget: tgt}
	res := loadgen.Run(context.Background(), loadgen.Spec{Clients: 4, Duration: 500 * time.Millisecond, Window: 500 * time.Millisecond, Timeout: time.Second}, s)
	if len(s.loops) == 0 {
		t.Fatal("the closed loop did not run on the event loop")
	}
	srv.CloseClientConnections()
	time.Sleep(50 * time.Millisecond) // the server's side of the last connections
	after := fds()
	t.Logf("%d requests, %d errors, server saw %d; descriptors %d before, %d after", res.Count, loadgen.SumErrors(res.Errors), seen.Load(), before, after)
	if res.Count < 100 || loadgen.SumErrors(res.Errors) != 0 {
		t.Errorf("count %d errors %v: want a hundred or more redials and no error", res.Count, res.Errors)
	}
	if after > before+2 {
		t.Errorf("%d descriptors after %d dials, %d before: the loop leaks sockets", after, res.Count, before)
	}
}

// loopsOf is an HTTP target that keeps the event loops the engine asked
// it for (made before the run starts, from one goroutine).
type loopsOf struct {
	*HTTPTarget
	loops []*httpLoop
}

func (s *loopsOf) NewLoop(n int) loadgen.Loop {
	l := s.HTTPTarget.NewLoop(n)
	if hl, ok := l.(*httpLoop); ok {
		s.loops = append(s.loops, hl)
	}
	return l
}
