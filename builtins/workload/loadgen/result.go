package loadgen

import (
	"encoding/json"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// Result is what one run measured: the one shape of a run's figures, for a
// local run, one agent's share (it travels as JSON, histograms in HDR V2)
// and a fleet's merged run (Merge). A new figure is a field here, a line in
// Merge, and its measurement in the engine; its JSON is the agent's report,
// so bump fleet.Version with it (TestMergeAndWireCarryEveryField checks
// Merge and the wire carry every field).
//
// Its counts obey Count + sum(Errors) + Dropped + Undecided == Intended
// (see recorder). Latencies are µs in the histograms; spans are
// time.Duration (ns on the wire).
type Result struct {
	Hist        *hdrhistogram.Histogram   `json:"-"`                  // latency from the intended start, µs: every decided request, failures and drops as lower bounds
	OK          *hdrhistogram.Histogram   `json:"-"`                  // the same, successful requests alone
	Service     *hdrhistogram.Histogram   `json:"-"`                  // service time of the successes, from the actual send, µs
	Lag         *hdrhistogram.Histogram   `json:"-"`                  // open loop: dispatch lag, send time minus intended start, µs
	Errors      map[string]int64          `json:"errors"`             // failed requests by class (see Classify)
	Windows     []Window                  `json:"windows"`            // per-window figures over the measurement window
	WindowHists []*hdrhistogram.Histogram `json:"-"`                  // each window's latencies (2 digits), for merging runs
	Intended    int64                     `json:"intended"`           // requests due (open loop) or started (closed loop) in the window
	Count       int64                     `json:"count"`              // successful requests in the window
	Late        int64                     `json:"late"`               // sent more than 10 ms after their intended start (open loop) or their user's think (think.go)
	After       int64                     `json:"after"`              // open loop: successes (of requests due in the window) answered after it closed
	Tick        time.Duration             `json:"tick_ns,omitempty"`  // open loop: the tick it ran with (Spec.Tick, or AutoTick's choice)
	Dropped     int64                     `json:"dropped"`            // open loop: given up unsent, a timeout or more behind
	Undecided   int64                     `json:"undecided"`          // Ctrl-C came before their outcome
	Measured    time.Duration             `json:"measured_ns"`        // how long the window lasted (shorter when interrupted)
	Interrupted bool                      `json:"interrupted"`        // Ctrl-C ended the run early
	CPU         time.Duration             `json:"cpu_ns"`             // the generator's own CPU (user + system) over the window
	GCPause     time.Duration             `json:"gc_pause_ns"`        // the generator's stop-the-world GC pauses over the window
	Observed    map[string]float64        `json:"observed,omitempty"` // the observers' figures; not merged (a fleet's observers run on the coordinator)
	Warnings    []string                  `json:"warnings,omitempty"` // what may make the figures less than they seem
	Trips       []guard.Trip              `json:"trips,omitempty"`    // run guards that tripped (guards.go): fatal ones make the run invalid
	// Tags are a tagged run's figures by tag (tags.go), each a whole
	// Result whose counts add up to its Intended; the tags' sum is the
	// run's. The whole window's figures (CPU and GC shared out by decided
	// requests, observers, trips) are the run's. Nil for an untagged run.
	Tags   map[string]*Result `json:"tags,omitempty"`
	Think  time.Duration      `json:"think_ns,omitempty"` // users with think time: the think they took before the window's requests, summed (think.go)
	Thinks int64              `json:"thinks,omitempty"`   // how many think times Think sums
	Gaps   Moments            `json:"gaps"`               // users with think time: gaps between consecutive intended starts (ends of think), µs, all users merged (a fleet: pooled over its agents)
	// LateObservers are the observers whose first snapshot came after
	// requests of the window (guards.go: Watch.Late); not merged, as
	// Observed (a fleet's observers run on the coordinator).
	LateObservers []LateObserver `json:"late_observers,omitempty"`
}

// Window is one measurement window of a run.
type Window struct {
	Start  float64          `json:"start"` // s since measurement start
	Count  int64            `json:"count"` // successful requests
	RPS    float64          `json:"rps"`   // successes per second
	P50    float64          `json:"p50"`   // ms, every decided request
	P99    float64          `json:"p99"`   // ms
	Errors map[string]int64 `json:"errors"`
}

// NewResult is an empty result to Merge runs into.
func NewResult() *Result {
	return &Result{Hist: NewHist(), OK: NewHist(), Service: NewHist(), Lag: NewHist(), Errors: map[string]int64{}}
}

// Merge adds o into r: histograms added (lossless for equal settings),
// counts summed, the longest window and tick kept, CPU summed, warnings
// and trips appended; o's windows land shift windows later (an agent that
// began its measurement late). Call WindowFigures after the last Merge.
func (r *Result) Merge(o *Result, shift int) {
	r.Hist, r.OK = addHist(r.Hist, o.Hist), addHist(r.OK, o.OK)
	r.Service, r.Lag = addHist(r.Service, o.Service), addHist(r.Lag, o.Lag)
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	addCounts(r.Errors, o.Errors)
	r.Intended += o.Intended
	r.Count += o.Count
	r.Late += o.Late
	r.After += o.After
	r.Tick = max(r.Tick, o.Tick)
	r.Dropped += o.Dropped
	r.Undecided += o.Undecided
	r.Measured = max(r.Measured, o.Measured)
	r.Interrupted = r.Interrupted || o.Interrupted
	r.CPU += o.CPU
	r.GCPause += o.GCPause
	r.Warnings = append(r.Warnings, o.Warnings...)
	r.Trips = append(r.Trips, o.Trips...)
	r.Think += o.Think
	r.Thinks += o.Thinks
	r.Gaps.Merge(o.Gaps)
	r.mergeWindows(o, max(shift, 0))
	for tag, t := range o.Tags {
		if r.Tags == nil {
			r.Tags = map[string]*Result{}
		}
		if r.Tags[tag] == nil {
			r.Tags[tag] = NewResult()
		}
		r.Tags[tag].Merge(t, shift)
	}
}

func (r *Result) mergeWindows(o *Result, shift int) {
	for i, w := range o.Windows {
		j := i + shift
		for len(r.Windows) <= j {
			r.Windows = append(r.Windows, Window{Errors: map[string]int64{}})
		}
		for len(r.WindowHists) <= j {
			r.WindowHists = append(r.WindowHists, nil)
		}
		r.Windows[j].Count += w.Count
		if r.Windows[j].Errors == nil {
			r.Windows[j].Errors = map[string]int64{}
		}
		addCounts(r.Windows[j].Errors, w.Errors)
		if i < len(o.WindowHists) {
			r.WindowHists[j] = addHist(r.WindowHists[j], o.WindowHists[i])
		}
	}
}

// WindowFigures sets each window's start, rate and percentiles from its
// counts and histogram: window is their length, duration the measurement
// window's (the last one may be shorter).
func (r *Result) WindowFigures(window, duration time.Duration) {
	for i := range r.Windows {
		w := &r.Windows[i]
		w.Start = (window * time.Duration(i)).Seconds()
		w.P50, w.P99, w.RPS = 0, 0, 0
		if i < len(r.WindowHists) && r.WindowHists[i] != nil {
			w.P50, w.P99 = QuantileMs(r.WindowHists[i], 50), QuantileMs(r.WindowHists[i], 99)
		}
		if length := min(window.Seconds(), duration.Seconds()-w.Start); length > 0 {
			w.RPS = float64(w.Count) / length
		}
	}
	for _, t := range r.Tags {
		t.WindowFigures(window, duration)
	}
}

// addHist adds b into a, making a when it is nil; both nil stays nil.
func addHist(a, b *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if b == nil {
		return a
	}
	if a == nil {
		a = hdrhistogram.New(b.LowestTrackableValue(), b.HighestTrackableValue(), int(b.SignificantFigures()))
	}
	a.Merge(b)
	return a
}

func addCounts(dst, src map[string]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

// resultFields is Result without its methods, so encoding/json reads its
// tagged fields while MarshalJSON adds the histograms.
type resultFields Result

// wireResult is a Result on the wire: its fields, and its histograms in
// HdrHistogram's V2 compressed encoding, base64 (as HdrHistogram's log
// tools and wrk2 exchange them); "" is a histogram the run did not have.
type wireResult struct {
	*resultFields
	HistV2        string   `json:"hist"`
	OKV2          string   `json:"ok_hist,omitempty"`
	ServiceV2     string   `json:"service,omitempty"`
	LagV2         string   `json:"lag,omitempty"`
	WindowHistsV2 []string `json:"window_hists,omitempty"`
}

// MarshalJSON is r with its histograms in HDR V2, base64.
func (r *Result) MarshalJSON() ([]byte, error) {
	w := wireResult{resultFields: (*resultFields)(r)}
	var err error
	enc := func(h *hdrhistogram.Histogram) string {
		if h == nil || err != nil {
			return ""
		}
		var b []byte
		if b, err = h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err != nil {
			err = fmt.Errorf("encode histogram: %w", err)
		}
		return string(b)
	}
	w.HistV2, w.OKV2, w.ServiceV2, w.LagV2 = enc(r.Hist), enc(r.OK), enc(r.Service), enc(r.Lag)
	for _, h := range r.WindowHists {
		w.WindowHistsV2 = append(w.WindowHistsV2, enc(h))
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// UnmarshalJSON reverses MarshalJSON.
func (r *Result) UnmarshalJSON(b []byte) error {
	w := wireResult{resultFields: (*resultFields)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var err error
	dec := func(s string) *hdrhistogram.Histogram {
		if s == "" || err != nil {
			return nil
		}
		var h *hdrhistogram.Histogram
		if h, err = hdrhistogram.Decode([]byte(s)); err != nil {
			err = fmt.Errorf("decode histogram: %w", err)
		}
		return h
	}
	r.Hist, r.OK, r.Service, r.Lag = dec(w.HistV2), dec(w.OKV2), dec(w.ServiceV2), dec(w.LagV2)
	r.WindowHists = nil
	for _, s := range w.WindowHistsV2 {
		r.WindowHists = append(r.WindowHists, dec(s))
	}
	return err
}
