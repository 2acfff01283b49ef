package loadgen

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Users with think time (Spec.Think): each client of a closed loop is a
// user who waits a think time between the response to one request and the
// start of the next, as a person reads a page before the next click (k6's
// sleep, Gatling's pause: the seeds' "simulated users"). Think 0 is a
// client that sends back to back. A user's first request waits a draw of
// its own (uniform over [0, Think) for a constant think, exponential for
// ThinkExp), so N users do not all start at once.
//
// What a run records of them, over its measurement window:
//   - Result.Think / Result.Thinks: the think the users took, from each
//     response to the user's next send, so a generator that sent late shows
//     in it;
//   - Result.Late and Lag: requests sent more than lateAfter past the end
//     of their user's think (only the generator delays them: the user's
//     connection is idle);
//   - Result.Gaps: the gaps between consecutive intended starts (the ends
//     of the thinks) of all users merged, for the coefficient of variation
//     of the arrivals the users offered (about 1 for exponential think and
//     many users, as a Poisson stream has); how late the generator sent
//     them is Late and Lag, as in an open loop.

// thinker draws one user's think times, from a source of its own.
type thinker struct {
	mean time.Duration
	exp  bool
	rng  *rand.Rand
}

// draw is the next think time: the mean, or an exponential draw of it.
func (t *thinker) draw() time.Duration {
	if !t.exp {
		return t.mean
	}
	return time.Duration(t.rng.ExpFloat64() * float64(t.mean))
}

// first is the wait before the user's first request: uniform over one
// think for a constant think, a draw for an exponential one (the stream is
// then stationary from the start).
func (t *thinker) first() time.Duration {
	if t.exp {
		return t.draw()
	}
	return time.Duration(t.rng.Float64() * float64(t.mean))
}

// user is a client of a closed loop with think time.
type user struct {
	think *thinker  // nil until its first request
	ready time.Time // when its think ends: its next request is due
	from  time.Time // when that think began (its last outcome); zero before its first request
}

// userStats are the measured starts of every user of a run.
type userStats struct {
	mu      sync.Mutex
	made    uint64    // users made so far: each seeds its own draws
	pending []int64   // intended starts (Unix ns) not yet placed in order: a min-heap
	last    time.Time // the latest intended start placed
	gaps    Moments   // gaps between consecutive intended starts, µs
	think   time.Duration
	thinks  int64
}

// reorder is how far out of order intended starts may come: a loop starts
// the users whose think ended in one pass, in its own order, and a late
// send comes after later ones. An intended start older than the last one
// placed (a send more than reorder late, which Late counts) counts as a
// gap of 0.
const reorder = 50 * time.Millisecond

// newThinker makes the next user's think draws, seeded by the run's
// SeqBase (a fleet's agents differ) and the user's number.
func (r *engine) newThinker() *thinker {
	r.users.mu.Lock()
	n := r.users.made
	r.users.made++
	r.users.mu.Unlock()
	return &thinker{mean: r.spec.Think, exp: r.spec.ThinkExp, rng: rand.New(rand.NewPCG(3, uint64(r.spec.SeqBase)<<20+n))}
}

// userReady reports whether u may send at now; a user's first call draws
// its staggered start.
func (r *engine) userReady(u *user, now time.Time) bool {
	if u.think == nil {
		u.think = r.newThinker()
		u.ready = now.Add(u.think.first())
	}
	return !now.Before(u.ready)
}

// userStarts records that u's request of tag ("" when not yet drawn)
// starts at now, when it leaves, its generator's time past: how late past
// its think it left, the think it took, and where its intended start (the
// end of its think) falls among the others'.
func (r *engine) userStarts(rec *recorder, u *user, now time.Time, tag string) {
	if !r.inMeasurement(now) {
		return
	}
	rec.dispatched(now.Sub(u.ready), tag)
	s := &r.users
	s.mu.Lock()
	defer s.mu.Unlock()
	if !u.from.IsZero() {
		s.think += now.Sub(u.from)
		s.thinks++
	}
	heap.Push((*nsHeap)(&s.pending), u.ready.UnixNano())
	s.place(u.ready.UnixNano() - int64(reorder))
}

// place takes the pending intended starts up to before in order into the
// gaps.
func (s *userStats) place(before int64) {
	h := (*nsHeap)(&s.pending)
	for h.Len() > 0 && s.pending[0] <= before {
		t := time.Unix(0, heap.Pop(h).(int64))
		if !s.last.IsZero() {
			s.gaps.Add(float64(max(t.Sub(s.last), 0)) / float64(time.Microsecond))
		}
		if t.After(s.last) {
			s.last = t
		}
	}
}

// nsHeap is a min-heap of times in Unix ns.
type nsHeap []int64

func (h nsHeap) Len() int           { return len(h) }
func (h nsHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h nsHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nsHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *nsHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// thinkFrom begins u's think at end, the outcome of its request.
func (u *user) thinkFrom(end time.Time) {
	u.from = end
	u.ready = end.Add(u.think.draw())
}

// thinkAfterFailedStart is thinkFrom for a request that failed before it
// was sent (a refused connection): the user waits its think, and at least
// until retryAt.
func (u *user) thinkAfterFailedStart(now, retryAt time.Time) {
	u.thinkFrom(now)
	if retryAt.After(u.ready) {
		u.ready = retryAt
	}
}

// thinking reports whether the loop's users think between requests: then
// no client sends back to back, drive starts each when its think ends.
func (r *engine) thinking() bool { return r.spec.Think > 0 }

// waitUser sleeps until u's next request is due; false if the run ended
// or was interrupted first.
func (r *engine) waitUser(u *user) bool {
	now := time.Now()
	if r.userReady(u, now) {
		return true
	}
	until := u.ready
	if r.end.Before(until) {
		until = r.end
	}
	return SleepUntil(r.ctx, until) && time.Now().Before(r.end)
}

// collectUsers copies the users' figures into the result.
func (r *engine) collectUsers(res *Result) {
	s := &r.users
	s.mu.Lock()
	defer s.mu.Unlock()
	s.place(math.MaxInt64)
	res.Think, res.Thinks, res.Gaps = s.think, s.thinks, s.gaps
}

// thinkWarnings say when the generator sent users' requests late: the
// users then sent less than their think times allow, whatever the target.
func thinkWarnings(res *Result) []string {
	if res.Late == 0 || res.Intended == 0 || float64(res.Late) <= 0.01*float64(res.Intended) {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d requests (%.1f %%) left more than %s after their user's think time ended: the generator was behind, and the users sent less than their think allows",
		res.Late, res.Intended, 100*float64(res.Late)/float64(res.Intended), lateAfter)}
}

// Moments are a series' count, mean and sum of squared deviations
// (Welford), so runs and agents merge them (Chan et al.).
type Moments struct {
	N    int64   `json:"n"`
	Mean float64 `json:"mean"`
	M2   float64 `json:"m2"`
}

// Add takes one value.
func (m *Moments) Add(x float64) {
	m.N++
	d := x - m.Mean
	m.Mean += d / float64(m.N)
	m.M2 += d * (x - m.Mean)
}

// Merge pools o into m.
func (m *Moments) Merge(o Moments) {
	if o.N == 0 {
		return
	}
	if m.N == 0 {
		*m = o
		return
	}
	n := m.N + o.N
	d := o.Mean - m.Mean
	m.M2 += o.M2 + d*d*float64(m.N)*float64(o.N)/float64(n)
	m.Mean += d * float64(o.N) / float64(n)
	m.N = n
}

// CV is the coefficient of variation, standard deviation over mean; NaN
// under two values.
func (m Moments) CV() float64 {
	if m.N < 2 || m.Mean <= 0 {
		return math.NaN()
	}
	return math.Sqrt(m.M2/float64(m.N-1)) / m.Mean
}
