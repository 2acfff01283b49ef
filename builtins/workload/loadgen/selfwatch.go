package loadgen

import (
	"context"
	"fmt"
	goruntime "runtime"
	"syscall"
	"time"
)

// Observer is a server-side source sampled around the measurement window
// (a PostgreSQL cluster, a target process): the Starlark values that can be
// passed in observe = [...].
type Observer interface {
	// Type names the observer in warnings.
	Type() string
	// StartObserving is called when the measurement window opens. The returned func is
	// called when it closes with the number of successful requests; its figures (e.g.
	// "db_cpu_us_per_req", "wal_bytes_per_req") become attributes of the Run.
	StartObserving(ctx context.Context) (stop func(requests int64) (map[string]float64, error), err error)
}

// selfStats is what the generator cost itself during the measurement window.
type selfStats struct {
	cpu      time.Duration // user + sys of this process
	gcPause  time.Duration // total stop-the-world pause
	numGC    uint32
	measured time.Duration
}

type selfSnapshot struct {
	cpu     time.Duration
	gcPause time.Duration
	numGC   uint32
}

func takeSelf() selfSnapshot {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return selfSnapshot{
		cpu:     time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		gcPause: time.Duration(ms.PauseTotalNs),
		numGC:   ms.NumGC,
	}
}

func (s selfSnapshot) since(before selfSnapshot, measured time.Duration) selfStats {
	return selfStats{cpu: s.cpu - before.cpu, gcPause: s.gcPause - before.gcPause,
		numGC: s.numGC - before.numGC, measured: measured}
}

// cpuShare is the generator's CPU use as a fraction of the cores it may use.
func (s selfStats) cpuShare() float64 {
	if s.measured <= 0 {
		return 0
	}
	return s.cpu.Seconds() / (s.measured.Seconds() * float64(maxProcs()))
}

// warnings say when the generator, not the target, may have set the pace.
func (s selfStats) warnings(spec Spec, res *Result) []string {
	return append(s.cpuWarnings(), s.openWarnings(spec, res)...)
}

// cpuWarnings are the generator's own: its CPU and GC over the window.
func (s selfStats) cpuWarnings() []string {
	var w []string
	if share := s.cpuShare(); share > 0.85 {
		w = append(w, fmt.Sprintf("the generator used %.0f%% of its %d CPUs: it may have been the bottleneck", share*100, goruntime.GOMAXPROCS(0)))
	}
	if s.measured > 0 && s.gcPause > s.measured/100 {
		w = append(w, fmt.Sprintf("the generator spent %s in GC pauses (%d GCs)", s.gcPause.Round(time.Microsecond), s.numGC))
	}
	return w
}

// openWarnings are an open loop's lag, lateness and drops in res, or
// users' late sends and long thinks (think.go) in a closed loop with think
// time.
func (s selfStats) openWarnings(spec Spec, res *Result) []string {
	switch {
	case spec.Clients == 0:
		return openLoopWarnings(spec, res)
	case spec.Think > 0:
		return thinkWarnings(res)
	}
	return nil
}

func openLoopWarnings(spec Spec, res *Result) []string {
	var w []string
	sent := res.Count + SumErrors(res.Errors)
	if lag := res.Lag.ValueAtQuantile(99); lag > int64(lateAfter/time.Microsecond) {
		w = append(w, fmt.Sprintf("pacer lag p99 %.1f ms: requests left later than scheduled", UsToMs(lag)))
	}
	if res.Late > 0 && sent > 0 && float64(res.Late) > 0.01*float64(sent) {
		w = append(w, fmt.Sprintf("%d requests were late (all %d in-flight slots busy or the generator behind)", res.Late, spec.MaxInflight))
	}
	// Count holds every success of a request due in the window, however
	// late its response; a target that fell behind answers the backlog
	// after the window, and req/s (Count over the window) would look held.
	if res.After > 0 && float64(res.After) > 0.01*float64(res.Count) && res.Measured > 0 {
		secs := res.Measured.Seconds()
		w = append(w, fmt.Sprintf("%d responses (%.0f %%) came after the window closed: inside it the target completed %.0f req/s, not the %.0f counted from the requests due in it",
			res.After, 100*float64(res.After)/float64(res.Count), float64(res.Count-res.After)/secs, float64(res.Count)/secs))
	}
	if res.Dropped > 0 {
		w = append(w, fmt.Sprintf("%d requests were dropped: they could not be sent within the timeout of their intended start", res.Dropped))
	}
	return w
}

// SumErrors is how many requests failed, over all classes.
func SumErrors(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// successes counts the measured successful requests so far.
func (r *engine) successes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, rec := range r.recs {
		n += rec.done.Load()
	}
	return n
}

func maxProcs() int { return goruntime.GOMAXPROCS(0) }
