package backendtest

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/backend/internal/kit"
	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/handle"
	"github.com/benchbook/benchbook/builtins/internal/runattrs"
)

// testStart: the handle is a well-behaved Starlark value, and Close ends
// what it started, twice without harm.
func testStart(t *testing.T, k Kind) {
	s := newSession(t, k)
	h := s.start(k)
	if h.Type() != k.Name {
		t.Errorf("Type() = %q, want %q", h.Type(), k.Name)
	}
	for _, name := range h.AttrNames() {
		if v, err := h.Attr(name); v == nil || err != nil {
			t.Errorf("dir(h) lists %q, but h.%s is %v, %v", name, name, v, err)
		}
	}
	if v, _ := h.Attr("no_such_attribute"); v != nil {
		t.Errorf("h.no_such_attribute = %v", v)
	}
	if !slices.IsSorted(h.AttrNames()) {
		t.Errorf("dir(h) is not sorted: %v", h.AttrNames())
	}
	if _, err := h.Hash(); err == nil {
		t.Errorf("a live handle is hashable")
	}
	if got := s.eval(`str(h)`); string(got.(starlark.String)) != h.String() {
		t.Errorf("str(h) = %s, String() = %s", got, h.String())
	}
	h.Close()
	h.Close() // the AtExit hook runs it again at the session's end
	if g, ok := h.(handle.Guarded); ok && g.Alive() {
		t.Errorf("alive after Close")
	}
}

// testObserve: a window with load shows the kind's figure above an idle
// window's, so the figures are the window's and not a running total or a
// constant; every figure is in the table of run attributes.
func testObserve(t *testing.T, k Kind) {
	s := newSession(t, k)
	h := s.start(k).(handle.Observer)
	ctx := context.Background()
	window := func(during func()) map[string]float64 {
		t.Helper()
		stop, err := h.StartObserving(ctx)
		if err != nil {
			t.Fatalf("StartObserving: %v", err)
		}
		during()
		figs, err := stop(100)
		if err != nil {
			t.Fatalf("stop: %v", err)
		}
		return figs
	}
	var busy time.Duration
	loaded := window(func() { t0 := time.Now(); s.must(k.Load); busy = time.Since(t0) })
	idle := window(func() { time.Sleep(min(busy, 2*time.Second)) })
	t.Logf("%s: loaded %v, idle %v (%d figures)", k.Figure, loaded[k.Figure], idle[k.Figure], len(loaded))
	if loaded[k.Figure] <= 0 || loaded[k.Figure] <= idle[k.Figure] {
		t.Errorf("%s = %v with load, %v idle: not the window's", k.Figure, loaded[k.Figure], idle[k.Figure])
	}
	if u := runattrs.Unknown(runattrs.Names(loaded)); len(u) > 0 {
		t.Errorf("figures the table of run attributes (and the reference) does not list: %v", u)
	}
}

// testGuard: a healthy window trips nothing fatal; the death of h.pid by
// SIGKILL in a window, and h.restart() in one, trip fatally.
func testGuard(t *testing.T, k Kind) {
	s := newSession(t, k)
	h := s.start(k).(handle.Guarded)
	ctx := context.Background()
	if !h.Alive() || !h.Watched() {
		t.Fatalf("a new handle: alive %v, watched %v", h.Alive(), h.Watched())
	}
	if !h.Serves(guard.Dest{Target: h}) {
		t.Errorf("a run given the handle itself does not send its traffic there")
	}
	stop := h.Watch(ctx, time.Now())
	time.Sleep(500 * time.Millisecond)
	if f := fatal(stop()); len(f) > 0 {
		t.Fatalf("a healthy window tripped: %v", f)
	}
	if v, _ := h.Attr("restart"); v != nil {
		stop = h.Watch(ctx, time.Now())
		s.must("h.restart()")
		if f := fatal(stop()); len(f) == 0 {
			t.Errorf("h.restart() in a window tripped nothing fatal")
		} else {
			t.Logf("restart: %v", f)
		}
	}
	pid := pidOf(t, h)
	stop = h.Watch(ctx, time.Now())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); h.Alive(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still alive 20 s after its SIGKILL", pid)
		}
	}
	time.Sleep(3 * kit.ContainerPoll) // a guard that polls sees it
	f := fatal(stop())
	if len(f) == 0 {
		t.Fatalf("the SIGKILL of pid %d mid-window tripped nothing fatal", pid)
	}
	t.Logf("SIGKILL: %v", f)
}

func fatal(trips []guard.Trip) []string {
	var out []string
	for _, tr := range trips {
		if tr.Fatal {
			out = append(out, fmt.Sprintf("%s %s: %s", tr.Source, tr.Kind, tr.Evidence))
		}
	}
	return out
}

// pidOf is h.pid: the process whose death the guard must see.
func pidOf(t *testing.T, h handle.Handle) int {
	t.Helper()
	v, err := h.Attr("pid")
	n, ok := v.(starlark.Int)
	if err != nil || !ok {
		t.Fatalf("a guarded handle needs a .pid, got %v, %v", v, err)
	}
	pid, _ := n.Int64()
	return int(pid)
}
