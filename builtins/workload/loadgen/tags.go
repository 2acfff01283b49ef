package loadgen

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Tags. A run's requests may be of several kinds, each with a tag ("read",
// "write", "search"): a mix drawn by weight (Mix), or a generator that
// names each request's tag. Every request is counted exactly once in its
// tag, beside the run's own figures: each worker's recorder records a
// request as it always did, and then into its tag's recorder (tagTable),
// one per tag for the whole engine, so the run's figures are untouched by
// tagging and each tag's are a whole Result (Result.Tags) that merges and
// travels like the run's. An untagged run has no table and records exactly
// as before.

// Untagged is the tag of a request in a tagged run that has none: a
// generator that named no tag for it, or failed before it could, or a
// request dropped or interrupted before it was made whose generator could
// not say what it would have been.
const Untagged = "(untagged)"

// OtherTags is the tag past MaxTags distinct ones: a generator that named a
// tag per request (an id, a whole path) would otherwise keep a histogram
// set per request.
const OtherTags = "(other tags)"

// MaxTags bounds the distinct tags of one run; the rest count under
// OtherTags, with a warning.
const MaxTags = 64

// Tagged is a target whose requests carry tags.
type Tagged interface {
	// Tags are the tags known before the run (a mix's, in order); a
	// generator's come as it names them.
	Tags() []string
	// TagOf is the tag of open-loop request seq, for a request that was
	// never made (dropped, or due when Ctrl-C came): a mix's draw, or
	// what its generator says (Untagged if it fails).
	TagOf(seq int64) string
}

// tagTable is an engine's recorders by tag: one per tag, shared by every
// worker (each caches its lookups), created as tags first appear.
type tagTable struct {
	mu    sync.Mutex
	recs  map[string]*recorder
	order []string // first appearance (a mix's tags in their order first)
}

func newTagTable(known []string) *tagTable {
	t := &tagTable{recs: map[string]*recorder{}}
	for _, tag := range known {
		t.recorder(tag)
	}
	return t
}

// recorder is tag's recorder, made on first use.
func (t *tagTable) recorder(tag string) *recorder {
	if tag == "" {
		tag = Untagged
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec, ok := t.recs[tag]; ok {
		return rec
	}
	if len(t.recs) >= MaxTags {
		tag = OtherTags
		if rec, ok := t.recs[tag]; ok {
			return rec
		}
	}
	rec := newRecorder(&windows{})
	t.recs[tag] = rec
	t.order = append(t.order, tag)
	return rec
}

// results are the tags' figures, by tag, as collect made the run's: each a
// whole Result whose counts add up to its Intended.
func (t *tagTable) results(r *engine, run *Result) map[string]*Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]*Result, len(t.recs))
	for _, tag := range t.order {
		out[tag] = r.tagResult(t.recs[tag], run)
	}
	return out
}

// tagResult is the Result of one tag's recorder. What the engine measures
// for the whole window alone (the generator's CPU and GC pauses, the
// observers' figures, the guards' trips) is the run's: CPU and GC are
// shared out by the tag's share of the decided requests, so a tag's figure
// per request is the run's; the rest is copied, and the tag's warnings say
// so in Result.TagWarnings.
func (r *engine) tagResult(rec *recorder, run *Result) *Result {
	rec.flush()
	res := &Result{Hist: rec.hist, OK: rec.ok, Service: rec.service, Lag: rec.lag, Errors: rec.errors,
		Late: rec.late, After: rec.after.Load(), Dropped: rec.dropped, Undecided: rec.undecided,
		Tick: run.Tick, Measured: run.Measured, Interrupted: run.Interrupted, Trips: run.Trips, Observed: run.Observed}
	res.Count = res.OK.TotalCount()
	res.Intended = res.Count + SumErrors(res.Errors) + res.Dropped + res.Undecided
	if decided, all := float64(res.Count+SumErrors(res.Errors)), float64(run.Count+SumErrors(run.Errors)); all > 0 {
		res.CPU = time.Duration(math.Round(float64(run.CPU) * decided / all))
		res.GCPause = time.Duration(math.Round(float64(run.GCPause) * decided / all))
	}
	rec.shared.mu.Lock()
	res.Windows, res.WindowHists = windowCounts(rec.shared, r.spec)
	rec.shared.mu.Unlock()
	res.WindowFigures(r.spec.Window, r.spec.Duration)
	return res
}

// tagRec is the recorder of tag for a worker recording into r: nil in an
// untagged run (and for a tag's own recorder). Called with r.mu held.
func (r *recorder) tagRec(tag string) *recorder {
	if r.tags == nil {
		return nil
	}
	t, ok := r.byTag[tag]
	if !ok {
		t = r.tags.recorder(tag)
		if r.byTag == nil {
			r.byTag = map[string]*recorder{}
		}
		r.byTag[tag] = t
	}
	return t
}

// tagOf is the tag of open-loop request seq that was never made; "" in an
// untagged run.
func (r *engine) tagOf(seq int64) string {
	if r.tags == nil {
		return ""
	}
	return r.tgt.(Tagged).TagOf(seq)
}

// Mix is a choice among request kinds by weight: request seq of client
// stream (0 in an open loop, whose sequence numbers are the run's; each
// closed-loop client numbers its own from 0, so it draws from its own
// stream) is kind Pick(stream, seq), the same in every run with the same
// seed and weights, on every machine: a fleet's agents draw from their own
// streams and sequence ranges.
type Mix struct {
	seed uint64
	cum  []float64 // cumulative shares, the last 1
}

// NewMix checks the weights (each > 0 and finite) and makes the mix.
func NewMix(weights []float64, seed uint64) (*Mix, error) {
	if len(weights) == 0 {
		return nil, fmt.Errorf("no requests to draw from")
	}
	var total float64
	for i, w := range weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("requests[%d]: weight must be a number > 0, got %g", i, w)
		}
		total += w
	}
	m := &Mix{seed: seed, cum: make([]float64, len(weights))}
	var run float64
	for i, w := range weights {
		run += w
		m.cum[i] = run / total
	}
	m.cum[len(m.cum)-1] = 1
	return m, nil
}

// Pick is the kind of request seq of stream.
func (m *Mix) Pick(stream, seq int64) int {
	if len(m.cum) == 1 {
		return 0
	}
	h := splitmix(splitmix(m.seed^splitmix(uint64(stream))) ^ uint64(seq))
	u := float64(h>>11) / (1 << 53) // uniform in [0, 1)
	lo, hi := 0, len(m.cum)-1       // the first kind whose cumulative share exceeds u
	for lo < hi {
		if mid := (lo + hi) / 2; m.cum[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Shares are the kinds' expected shares of the requests.
func (m *Mix) Shares() []float64 {
	out := slices.Clone(m.cum)
	for i := len(out) - 1; i > 0; i-- {
		out[i] -= out[i-1]
	}
	return out
}

// splitmix is SplitMix64's finaliser: a bijective 64-bit mix whose output
// passes BigCrush for consecutive inputs.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// UniqueTags lists tags in order without repeats (a mix's kinds may share
// a tag: two reads of different shapes both "read").
func UniqueTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t == "" {
			t = Untagged
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// MixShares is each tag's share of a mix's weights (kinds may share a
// tag); nil without a mix.
func MixShares(tags []string, m *Mix) map[string]float64 {
	if m == nil {
		return nil
	}
	out := map[string]float64{}
	for i, s := range m.Shares() {
		out[tags[i]] += s
	}
	return out
}
