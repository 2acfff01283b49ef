package guard

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lines is a log that got these batches of lines: a read returns all that
// the previous reads did not.
func lines(batches ...[]string) Lines {
	var mu sync.Mutex
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, b := range batches {
			out = append(out, b...)
		}
		batches = nil
		return out
	}
}

func TestFollowLog(t *testing.T) {
	rules := LogRules{Allow: []*regexp.Regexp{regexp.MustCompile(`canceling autovacuum task`)}}
	stop := FollowLog(context.Background(), time.Now(), "postgres", rules, lines(
		[]string{"LOG:  checkpoint starting", "ERROR:  canceling autovacuum task", "ERROR:  deadlock detected"},
		[]string{"LOG:  server process (PID 7) was terminated by signal 9: Killed", "FATAL:  the database system is in recovery mode", "an ERRORS word is no level"},
	))
	trips := stop()
	if len(trips) != 2 {
		t.Fatalf("trips: %+v", trips)
	}
	if trips[0].Kind != "crashed_backend" || !trips[0].Fatal || !strings.Contains(trips[0].Evidence, "PID 7") {
		t.Errorf("crash: %+v", trips[0])
	}
	if e := trips[1].Evidence; trips[1].Kind != "log_errors" || trips[1].Fatal ||
		!strings.HasPrefix(e, "1 FATAL, 1 ERROR lines") || !strings.Contains(e, "(1 more allowed)") || !strings.Contains(e, "deadlock detected") {
		t.Errorf("errors: %+v", trips[1])
	}
	if why := Invalid(trips); !strings.Contains(why, "crashed backend") {
		t.Errorf("invalid: %q", why)
	}
	if Invalid(trips[1:]) != "" {
		t.Error("log errors alone made a run invalid")
	}
}

func TestCountLog(t *testing.T) {
	rules := LogRules{Count: map[string]*regexp.Regexp{"retries": regexp.MustCompile(`retry|backoff`)}}
	stop := CountLog(context.Background(), rules, lines([]string{"retry 1", "ok", "backoff 2s"}, []string{"retry 2"}))
	figs := stop(6)
	if figs["retries"] != 3 || figs["retries_per_req"] != 0.5 {
		t.Fatalf("figures: %v", figs)
	}
}

func TestHostDiskWatermark(t *testing.T) {
	stop := Host{Path: t.TempDir(), DiskFreeMin: 1 << 62}.Watch(context.Background(), time.Now())
	trips := stop()
	if len(trips) != 1 || trips[0].Kind != "disk" || !trips[0].Fatal {
		t.Fatalf("trips: %+v", trips)
	}
	if trips := (Host{Path: t.TempDir(), DiskFreeMin: 1}).Watch(context.Background(), time.Now())(); len(trips) != 0 {
		t.Fatalf("1 byte watermark tripped: %+v", trips)
	}
}

// TestEveryStopsAndSettles: calls happen while running, none after stop
// returns, and stop may be called twice.
func TestEveryStopsAndSettles(t *testing.T) {
	var n atomic.Int64
	stop := Every(context.Background(), time.Millisecond, func() { n.Add(1) })
	time.Sleep(30 * time.Millisecond)
	stop()
	got := n.Load()
	if got == 0 {
		t.Fatal("fn never ran in 30 ms at a 1 ms interval")
	}
	time.Sleep(10 * time.Millisecond)
	if n.Load() != got {
		t.Errorf("fn ran after stop returned: %d then %d", got, n.Load())
	}
	stop()
	ctx, cancel := context.WithCancel(context.Background())
	stop = Every(ctx, time.Hour, func() {})
	cancel()
	stop() // returns although the goroutine left on its own
}

// TestWatchExitSeesADeathBeforeStop: a target dead before stop is called
// trips, however soon stop comes. Before, the watch's goroutine chose at
// random between the target's end and stop's when both were ready, and a
// demo killed just before the run's end was reported alive (a fresh
// clone's TestDemoGuard); here that lost the trip in about half the tries.
func TestWatchExitSeesADeathBeforeStop(t *testing.T) {
	dead := make(chan struct{})
	close(dead)
	lost := 0
	for range 2000 {
		stop := WatchExit(context.Background(), dead, func() Trip { return Trip{Kind: "killed"} })
		if trips := stop(); len(trips) != 1 {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("a target dead before stop: no trip in %d of 2000 watches", lost)
	}
	alive := make(chan struct{})
	if trips := WatchExit(context.Background(), alive, func() Trip { return Trip{Kind: "killed"} })(); len(trips) != 0 {
		t.Errorf("a live target tripped: %+v", trips)
	}
}
