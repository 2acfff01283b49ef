package loadgen

import (
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// recorder collects the results of the workers that share it (one worker in
// a closed loop, a few in an open loop). The mutex is uncontended in the
// common case; the current window's histogram is folded into the run's
// shared windows when the worker moves on, so memory stays bounded however
// long the run.
//
// Every request of the measurement window lands in exactly one of the
// success count, an error class, dropped or undecided, and (all but the
// undecided) in hist: a failed or dropped request as a lower bound, the time
// from its intended start to when it failed or was given up. So the
// percentiles cannot look better because requests failed or were dropped.
type recorder struct {
	mu        sync.Mutex
	hist      *hdrhistogram.Histogram // latency, µs, from the intended start: every decided request
	ok        *hdrhistogram.Histogram // latency, µs, of the successful requests alone
	service   *hdrhistogram.Histogram // service time, µs, from the actual send, of the successes
	lag       *hdrhistogram.Histogram // open loop: send time minus intended start, µs
	late      int64                   // open loop: sent more than lateAfter behind
	dropped   int64                   // open loop: never sent, given up a timeout behind
	undecided int64                   // Ctrl-C came first: in flight, or due and not yet sent
	errors    map[string]int64
	win       int // index of cur
	cur       *windowAcc
	shared    *windows

	tags  *tagTable            // a tagged run's recorders by tag; nil untagged (and in a tag's own)
	byTag map[string]*recorder // this recorder's lookups in tags

	after atomic.Int64 // open loop: successes of the window whose response came after it closed
	done  atomic.Int64 // successes in the measurement window
	errs  atomic.Int64 // errors in the measurement window
	warm  atomic.Int64 // requests finished during warmup (progress only)
}

// windowAcc is one window's share of one recorder.
type windowAcc struct {
	hist    *hdrhistogram.Histogram // every decided request, as the run's hist
	ok      int64
	dropped int64
	errors  map[string]int64
}

func newRecorder(shared *windows) *recorder {
	return &recorder{hist: NewHist(), ok: NewHist(), service: NewHist(), lag: newWindowHist(),
		errors: map[string]int64{}, shared: shared, win: -1}
}

// record adds one finished request: its latency from the intended start,
// its service time, its error class ("" for success), the window it
// belongs to, and its tag (in a tagged run: recorded again in the tag's).
func (r *recorder) record(latency, service time.Duration, class string, win int, tag string) {
	us := min(max(int64(latency/time.Microsecond), HistMin), HistMax)
	r.mu.Lock()
	if win != r.win {
		r.switchWindow(win)
	}
	_ = r.hist.RecordValue(us)
	_ = r.cur.hist.RecordValue(us)
	if class == "" {
		_ = r.ok.RecordValue(us)
		_ = r.service.RecordValue(min(max(int64(service/time.Microsecond), HistMin), HistMax))
		r.cur.ok++
	} else {
		r.errors[class]++
		r.cur.errors[class]++
	}
	t := r.tagRec(tag)
	r.mu.Unlock()
	if class == "" {
		r.done.Add(1)
	} else {
		r.errs.Add(1)
	}
	if t != nil {
		t.record(latency, service, class, win, "")
	}
}

func (r *recorder) switchWindow(win int) {
	if r.cur != nil {
		r.shared.fold(r.win, r.cur)
		r.cur.hist.Reset()
		clear(r.cur.errors)
		r.cur.ok, r.cur.dropped = 0, 0
	} else {
		r.cur = &windowAcc{hist: newWindowHist(), errors: map[string]int64{}}
	}
	r.win = win
}

// dispatched notes the dispatch lag of a measured open-loop request.
func (r *recorder) dispatched(lag time.Duration, tag string) {
	r.mu.Lock()
	_ = r.lag.RecordValue(min(max(int64(lag/time.Microsecond), HistMin), HistMax))
	if lag > lateAfter {
		r.late++
	}
	t := r.tagRec(tag)
	r.mu.Unlock()
	if t != nil {
		t.dispatched(lag, "")
	}
}

// drop counts a measured open-loop request that was given up unsent,
// waited the given time from its intended start, of window win.
func (r *recorder) drop(waited time.Duration, win int, tag string) {
	us := min(max(int64(waited/time.Microsecond), HistMin), HistMax)
	r.mu.Lock()
	if win != r.win {
		r.switchWindow(win)
	}
	_ = r.hist.RecordValue(us)
	_ = r.cur.hist.RecordValue(us)
	r.cur.dropped++
	r.dropped++
	t := r.tagRec(tag)
	r.mu.Unlock()
	if t != nil {
		t.drop(waited, win, "")
	}
}

// undecide counts a measured request that Ctrl-C left without an outcome.
func (r *recorder) undecide(tag string) {
	r.mu.Lock()
	r.undecided++
	t := r.tagRec(tag)
	r.mu.Unlock()
	if t != nil {
		t.undecide("")
	}
}

// answeredAfter counts an open-loop success of the window answered after
// it closed.
func (r *recorder) answeredAfter(tag string) {
	r.after.Add(1)
	if r.tags == nil {
		return
	}
	r.mu.Lock()
	t := r.tagRec(tag)
	r.mu.Unlock()
	if t != nil {
		t.after.Add(1)
	}
}

// flush folds what is left into the shared windows; called once at the end.
func (r *recorder) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.shared.fold(r.win, r.cur)
		r.cur = nil
	}
}

// windows are the run's per-window histograms and counts.
type windows struct {
	mu      sync.Mutex
	hist    []*hdrhistogram.Histogram
	ok      []int64
	dropped []int64
	errs    []map[string]int64
}

func (w *windows) fold(i int, acc *windowAcc) {
	if i < 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.hist) <= i {
		w.hist = append(w.hist, newWindowHist())
		w.ok = append(w.ok, 0)
		w.dropped = append(w.dropped, 0)
		w.errs = append(w.errs, map[string]int64{})
	}
	w.hist[i].Merge(acc.hist)
	w.ok[i] += acc.ok
	w.dropped[i] += acc.dropped
	for k, v := range acc.errors {
		w.errs[i][k] += v
	}
}

// lastP99 is the p99 of the newest window with data, for the progress line.
func (w *windows) lastP99() (float64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.hist) - 1; i >= 0; i-- {
		if w.hist[i].TotalCount() > 0 {
			return QuantileMs(w.hist[i], 99), true
		}
	}
	return 0, false
}
