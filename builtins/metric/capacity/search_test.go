package capacity

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// runKey is a checkpoint's identity: a level and a repeat there.
type runKey struct {
	level  float64
	repeat int
}

// memoMeasure serves a run from store when it was measured before, else
// measures it with fresh, and counts the new runs.
type memoMeasure struct {
	store map[runKey]Reading
	fresh func(level float64) Reading
	news  []runKey
	stop  int // fail the stop'th new run (1-based) as an interrupt; 0: never
}

var errInterrupt = errors.New("interrupted")

func (m *memoMeasure) measure(level float64, repeat int) (Reading, error) {
	k := runKey{level, repeat}
	if r, ok := m.store[k]; ok {
		return r, nil
	}
	if m.stop > 0 && len(m.news)+1 == m.stop {
		return Reading{}, errInterrupt
	}
	r := m.fresh(level)
	m.store[k] = r
	m.news = append(m.news, k)
	return r, nil
}

func noisy(seed uint64, f func(float64) float64, sigma float64) func(float64) Reading {
	rng := rand.New(rand.NewPCG(seed, 1))
	return func(x float64) Reading {
		return Reading{Values: []float64{f(x) * math.Exp(sigma*rng.NormFloat64())}}
	}
}

var p99 = []Limit{{Metric: "p99", Value: 50, Max: true}}

// linear is the zero-think server: 5 ms of p99 per user, so 10 users sit
// on the limit and 9 meet it.
func linear(x float64) float64 { return 5 * x }

// TestSearchResumesWithoutRemeasuring: a search interrupted at each of its
// runs in turn, then run again over the same checkpoints, measures every
// run exactly once and ends with the result of the search that was never
// interrupted.
func TestSearchResumesWithoutRemeasuring(t *testing.T) {
	o := users(1, 64)
	whole := &memoMeasure{store: map[runKey]Reading{}, fresh: noisy(7, linear, 0.08)}
	want, err := Search(o, p99, whole.measure)
	if err != nil {
		t.Fatal(err)
	}
	for stop := 1; stop <= len(whole.news); stop++ {
		fresh := noisy(7, linear, 0.08)
		m := &memoMeasure{store: map[runKey]Reading{}, fresh: fresh, stop: stop}
		if _, err := Search(o, p99, m.measure); !errors.Is(err, errInterrupt) {
			t.Fatalf("interrupt at run %d: %v", stop, err)
		}
		m.stop = 0
		got, err := Search(o, p99, m.measure)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.news) != len(whole.news) {
			t.Fatalf("interrupted at run %d: %d runs in all, the whole search made %d", stop, len(m.news), len(whole.news))
		}
		for i, k := range m.news {
			if k != whole.news[i] {
				t.Fatalf("interrupted at run %d: run %d was %v, the whole search's %v", stop, i, k, whole.news[i])
			}
		}
		if fmt.Sprint(got.Value, got.Low, got.High, got.Status, len(got.Points)) != fmt.Sprint(want.Value, want.Low, want.High, want.Status, len(want.Points)) {
			t.Fatalf("interrupted at run %d: %v [%v, %v] %s, whole %v [%v, %v] %s", stop, got.Value, got.Low, got.High, got.Status, want.Value, want.Low, want.High, want.Status)
		}
	}
	t.Logf("%d runs, capacity %v in [%v, %v]", len(whole.news), want.Value, want.Low, want.High)
}

// TestMoreRepeatsReuseTheRuns: a search run again at a higher confidence
// (more repeats at its ends) reuses every run the first made before its
// ends were judged, and every repeat it makes again.
func TestMoreRepeatsReuseTheRuns(t *testing.T) {
	o := users(1, 64)
	o.Confidence = 0.9
	m := &memoMeasure{store: map[runKey]Reading{}, fresh: noisy(11, linear, 0.05)}
	first, err := Search(o, p99, m.measure)
	if err != nil {
		t.Fatal(err)
	}
	before := len(m.news)
	o.Confidence = 0.99
	second, err := Search(o, p99, m.measure)
	if err != nil {
		t.Fatal(err)
	}
	reused := 0
	firstRuns := map[runKey]bool{}
	for _, p := range first.Points {
		firstRuns[runKey{p.Level, p.Repeat}] = true
	}
	for _, p := range second.Points {
		if firstRuns[runKey{p.Level, p.Repeat}] {
			reused++
		}
	}
	t.Logf("0.90: %d runs, [%v, %v]; 0.99: %d runs, %d of them reused, [%v, %v]", before, first.Low, first.High, len(second.Points), reused, second.Low, second.High)
	for _, p := range first.Points {
		if p.Phase != "repeat" && !hasPoint(second, p.Level, p.Repeat) {
			t.Errorf("the %s run at %v was not asked for again", p.Phase, p.Level)
		}
	}
	if reused+len(m.news)-before != len(second.Points) {
		t.Errorf("%d runs, %d reused, %d new", len(second.Points), reused, len(m.news)-before)
	}
	if len(m.news)-before >= len(second.Points) {
		t.Errorf("the second search measured all its %d runs anew", len(second.Points))
	}
}

func hasPoint(r *Result, level float64, repeat int) bool {
	for _, p := range r.Points {
		if p.Level == level && p.Repeat == repeat {
			return true
		}
	}
	return false
}

// TestSearchStatuses: a search says what it found when the crossing is not
// in the range, and refuses when the generator set the pace or a run was
// invalid at a level that sets the interval, naming the level; elsewhere
// such runs only warn.
func TestSearchStatuses(t *testing.T) {
	run := func(o Options, f func(x float64, repeat int) Reading) *Result {
		t.Helper()
		res, err := Search(o, p99, func(x float64, rep int) (Reading, error) { return f(x, rep), nil })
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	at := func(v float64) Reading { return Reading{Values: []float64{v}} }
	above := run(users(1, 32), func(float64, int) Reading { return at(10) })
	if above.Status != Above || above.Low != 32 || !math.IsInf(above.High, 1) || !strings.Contains(above.Reason, "held at hi = 32") {
		t.Errorf("always met: %s [%v, %v] %q", above.Status, above.Low, above.High, above.Reason)
	}
	below := run(users(4, 32), func(float64, int) Reading { return at(90) })
	if below.Status != Below || !math.IsNaN(below.Value) || below.High != 3 || !strings.Contains(below.Reason, "broke at lo = 4") {
		t.Errorf("never met: %s %v [%v, %v] %q", below.Status, below.Value, below.Low, below.High, below.Reason)
	}
	bound := func(from float64) func(float64, int) Reading {
		return func(x float64, _ int) Reading {
			r := at(linear(x))
			if x >= from {
				r.GenBound = "its CPU 93 % of 2 CPUs"
			}
			return r
		}
	}
	gen := run(users(1, 64), bound(11))
	if gen.Status != Generator || !math.IsNaN(gen.Value) || !strings.Contains(gen.Reason, "at 11 the load generator may have set the pace (its CPU 93 % of 2 CPUs)") {
		t.Errorf("generator-bound at the failing end, 11: %s %v %q", gen.Status, gen.Value, gen.Reason)
	}
	// Bound only above the crossing (the step-up's 16): it sets nothing.
	away := run(users(1, 64), bound(16))
	if away.Status != OK || away.Value != 10 || len(away.Warnings) != 1 || !strings.Contains(away.Warnings[0], "generator-bound or invalid (at 16): they set neither end") {
		t.Errorf("generator-bound at 16 only: %s %v %q", away.Status, away.Value, away.Warnings)
	}
	inv := run(users(1, 64), func(x float64, _ int) Reading {
		r := at(linear(x))
		if x == 10 {
			r.Invalid = "target exited"
		}
		return r
	})
	if inv.Status != Invalid || !strings.Contains(inv.Reason, "the run at 10 is invalid (target exited)") {
		t.Errorf("invalid at 10: %s %q", inv.Status, inv.Reason)
	}
	o := users(1, 64)
	o.MaxRuns = 9
	budget := run(o, func(x float64, _ int) Reading { return at(linear(x)) })
	if budget.Status != Budget || !strings.Contains(budget.Reason, "max_runs = 9 ran out") || len(budget.Points) != 9 {
		t.Errorf("9 runs: %s %q, %d points", budget.Status, budget.Reason, len(budget.Points))
	}
	exact := run(users(1, 64), func(x float64, _ int) Reading { return at(linear(x)) })
	if exact.Status != OK || exact.Value != 10 || exact.Low != 10 || exact.High != 10 || exact.Limiting != "p99" {
		t.Errorf("5 ms a user, limit 50: %s %v [%v, %v] limiting %q", exact.Status, exact.Value, exact.Low, exact.High, exact.Limiting)
	}
}

// TestLimitingIsTheFirstToBreak: with a latency limit that breaks at 9
// users and an error-rate limit that breaks at 20, the search finds 8 and
// names p99; the limit on a figure that must stay high (rps) holds the
// other way.
func TestLimitingIsTheFirstToBreak(t *testing.T) {
	limits := []Limit{{Metric: "error_rate", Value: 0.01, Max: true}, {Metric: "p99", Value: 45, Max: true}, {Metric: "rps", Value: 100}}
	res, err := Search(users(1, 64), limits, func(x float64, _ int) (Reading, error) {
		return Reading{Values: []float64{0.001 * math.Max(1, x-10), linear(x), 1000}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Value != 9 || res.Limiting != "p99" {
		t.Errorf("capacity %v limited by %q, want 9 and p99", res.Value, res.Limiting)
	}
	res, err = Search(users(1, 64), limits, func(x float64, _ int) (Reading, error) {
		return Reading{Values: []float64{0, 1, 1000 / x}}, nil
	})
	if err != nil || res.Value != 10 || res.Limiting != "rps" {
		t.Errorf("rps >= 100 of 1000/x: %v limited by %q (%v)", res.Value, res.Limiting, err)
	}
}

// TestBusyRunsAreCounted: runs on a busy box are counted, and the ones at
// the interval's ends named.
func TestBusyRunsAreCounted(t *testing.T) {
	res, err := Search(users(1, 64), p99, func(x float64, rep int) (Reading, error) {
		return Reading{Values: []float64{linear(x)}, Busy: x == 10 && rep < 2}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], fmt.Sprintf("2 of %d runs ran on a busy box, 2 of them at the levels that set the interval (10, 11)", len(res.Points))) {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// TestOptionsChecked: each bad option is named.
func TestOptionsChecked(t *testing.T) {
	for _, c := range []struct {
		o    func(*Options)
		want string
	}{
		{func(o *Options) { o.Lo = 0 }, "lo must be > 0, got 0"},
		{func(o *Options) { o.Hi = 0.5 }, "hi must be at least lo (1), got 0.5"},
		{func(o *Options) { o.Hi = 10.5 }, "whole numbers"},
		{func(o *Options) { o.Factor = 1 }, "factor must be > 1, got 1"},
		{func(o *Options) { o.Confidence = 1 }, "confidence must be from 0.5 to below 1, got 1"},
		{func(o *Options) { o.MaxRepeats = 4 }, "repeats = 4 cannot judge a level at confidence 0.95: each end needs 6 runs one way"},
		{func(o *Options) { o.MaxRuns = 0 }, "max_runs must be >= 1"},
		{func(o *Options) { o.Relative = 1.5 }, "resolution must be > 0"},
	} {
		o := users(1, 64)
		c.o(&o)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", o, err, c.want)
		}
	}
}
