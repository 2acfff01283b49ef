package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/internal/profile/starprofile"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
	"github.com/benchbook/benchbook/runtime/codec"
)

// runStored is a run as the cache stores it: JSON, histograms in HDR V2
// encoding beside it. Its fields, their order and their units are the
// format, unchanged since runs were first stored (a cell's key holds the
// hash of what it read: TestRunEncodingUnchangedByProfiles), so a run
// stored by any earlier version decodes, and stores again to the same
// bytes. Durations are kept as they were shown (s, µs, ms); Go's
// nanoseconds come back from them exactly (TestRunStoresBackToItsBytes).
type runStored struct {
	Kind        string             `json:"kind"`
	Label       string             `json:"label"`
	Clients     int                `json:"clients,omitempty"`
	Rate        float64            `json:"rate,omitempty"`
	Intended    int64              `json:"intended"`
	Count       int64              `json:"count"`
	Errors      map[string]int64   `json:"errors"`
	Duration    float64            `json:"duration"` // s: Result.Measured
	Late        int64              `json:"late"`
	TickUs      float64            `json:"tick_us,omitempty"` // µs: Result.Tick
	Dropped     int64              `json:"dropped"`
	Undecided   int64              `json:"undecided"`
	Windows     []windowStat       `json:"windows"`
	GenCPU      float64            `json:"gen_cpu_us_per_req"` // µs per decided request: Result.CPU
	GenGCPause  float64            `json:"gen_gc_pause_ms,omitempty"`
	Interrupted bool               `json:"interrupted"`
	Warnings    []string           `json:"warnings"`
	Observed    map[string]float64 `json:"observed,omitempty"`
	WallMs      []float64          `json:"wall_ms,omitempty"`
	CPUMs       []float64          `json:"cpu_ms,omitempty"`
	UserMs      []float64          `json:"user_ms,omitempty"`
	SysMs       []float64          `json:"sys_ms,omitempty"`
	MaxRSSKb    []int64            `json:"max_rss_kb,omitempty"`
	Trips       []guard.Trip       `json:"trips,omitempty"`
	WarmupS     float64            `json:"warmup_s,omitempty"`
	WarmupAuto  bool               `json:"warmup_auto,omitempty"`
	Agents      []agentRow         `json:"agents,omitempty"`
	Incomplete  bool               `json:"incomplete,omitempty"`
	Profile     *starprofile.Data  `json:"profile,omitempty"`  // absent without profile = True: such a run stores as before profiles
	Think       string             `json:"think,omitempty"`    // users' think; absent without: such a run stores as before users
	ThinkNs     int64              `json:"think_ns,omitempty"` // Result.Think
	Thinks      int64              `json:"thinks,omitempty"`
	Gaps        *loadgen.Moments   `json:"gaps,omitempty"`          // Result.Gaps, when it has any
	GenShare    *float64           `json:"gen_cpu_share,omitempty"` // absent in runs stored before it, and for exec
	ThinkLagMs  float64            `json:"think_lag_ms,omitempty"`
	// LateObservers are Result.LateObservers (absent when none was late:
	// such a run stores as before them).
	LateObservers []loadgen.LateObserver `json:"late_observers,omitempty"`

	Hist    []byte            `json:"hist"`
	OK      []byte            `json:"ok_hist,omitempty"` // absent in runs stored before it: Hist was successes only
	Service []byte            `json:"service,omitempty"`
	Acquire []byte            `json:"acquire,omitempty"`
	ByTag   map[string][]byte `json:"by_tag,omitempty"` // sql: per statement (run.by_statement; stored under this name before tags)

	Tag   string                     `json:"tag,omitempty"`   // a per-tag run's
	Seed  uint64                     `json:"seed,omitempty"`  // a mix's
	Share float64                    `json:"share,omitempty"` // a mix tag's share of the weights
	Tags  map[string]json.RawMessage `json:"tags,omitempty"`  // a mix's runs by tag, each stored as a run
}

// MarshalValue stores the run as JSON with its histograms in HDR V2 encoding.
func (r *Run) MarshalValue() ([]byte, error) {
	d := r.d
	s := runStored{Kind: d.Kind, Label: d.Label, Clients: d.Clients, Rate: d.Rate,
		Intended: d.Intended, Count: d.Count, Errors: d.Errors, Duration: d.Measured.Seconds(), Late: d.Late,
		TickUs: inUnits(d.Tick, time.Microsecond), Dropped: d.Dropped, Undecided: d.Undecided, Windows: d.Windows,
		GenCPU: r.genCPU(), GenGCPause: inUnits(d.GCPause, time.Millisecond), Interrupted: d.Interrupted,
		Warnings: d.Warnings, Observed: d.Observed, WallMs: d.WallMs, CPUMs: d.CPUMs, UserMs: d.UserMs, SysMs: d.SysMs,
		MaxRSSKb: d.MaxRSSKb, Trips: d.Trips, WarmupS: d.WarmupS, WarmupAuto: d.WarmupAuto, Agents: d.Agents,
		Incomplete: d.Incomplete, Profile: d.Profile, Tag: d.Tag, Seed: d.Seed, Share: d.Share,
		Think: d.Think, ThinkNs: int64(d.Result.Think), Thinks: d.Thinks, ThinkLagMs: d.ThinkLagMs,
		LateObservers: d.LateObservers}
	if d.Gaps.N > 0 {
		s.Gaps = &d.Gaps
	}
	if !math.IsNaN(d.GenShare) {
		s.GenShare = &d.GenShare
	}
	for tag, t := range r.tags {
		b, err := t.MarshalValue()
		if err != nil {
			return nil, err
		}
		if s.Tags == nil {
			s.Tags = map[string]json.RawMessage{}
		}
		s.Tags[tag] = b
	}
	var err error
	enc := func(h *hdrhistogram.Histogram) []byte {
		if h == nil || err != nil {
			return nil
		}
		var b []byte
		b, err = h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		return b
	}
	s.Hist, s.OK, s.Service, s.Acquire = enc(d.Hist), enc(d.OK), enc(d.Service), enc(r.acquire)
	if len(r.byStatement) > 0 {
		s.ByTag = map[string][]byte{}
		for k, h := range r.byStatement {
			s.ByTag[k] = enc(h)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return json.Marshal(s)
}

func decodeRun(data []byte, _ codec.Types) (starlark.Value, error) {
	var s runStored
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	decided := s.Count + sumErrors(s.Errors)
	r := &Run{d: runData{Kind: s.Kind, Label: s.Label, Clients: s.Clients, Rate: s.Rate,
		Result: &loadgen.Result{Intended: s.Intended, Count: s.Count, Errors: s.Errors,
			Measured: fromUnits(s.Duration, time.Second), Late: s.Late, Tick: fromUnits(s.TickUs, time.Microsecond),
			Dropped: s.Dropped, Undecided: s.Undecided, Windows: s.Windows,
			CPU: fromUnits(s.GenCPU*float64(decided), time.Microsecond), GCPause: fromUnits(s.GenGCPause, time.Millisecond),
			Interrupted: s.Interrupted, Warnings: s.Warnings, Observed: s.Observed, Trips: s.Trips,
			Think: time.Duration(s.ThinkNs), Thinks: s.Thinks, LateObservers: s.LateObservers},
		WallMs: s.WallMs, CPUMs: s.CPUMs, UserMs: s.UserMs, SysMs: s.SysMs, MaxRSSKb: s.MaxRSSKb,
		WarmupS: s.WarmupS, WarmupAuto: s.WarmupAuto, Agents: s.Agents, Incomplete: s.Incomplete, Profile: s.Profile,
		Tag: s.Tag, Seed: s.Seed, Share: s.Share,
		Think: s.Think, GenShare: math.NaN(), ThinkLagMs: s.ThinkLagMs}}
	if s.Gaps != nil {
		r.d.Gaps = *s.Gaps
	}
	if s.GenShare != nil {
		r.d.GenShare = *s.GenShare
	}
	if err := r.decodeHists(&s); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	for tag, b := range s.Tags {
		t, err := decodeRun(b, nil)
		if err != nil {
			return nil, fmt.Errorf("run: tag %s: %w", tag, err)
		}
		if r.tags == nil {
			r.tags = map[string]*Run{}
		}
		r.tags[tag] = t.(*Run)
		r.tags[tag].parent = r
	}
	if r.d.Intended == 0 && (r.d.Kind == "http" || r.d.Kind == "sql") { // stored before runs kept it
		r.d.Intended = r.d.Count + sumErrors(r.d.Errors) + r.d.Dropped + r.d.Undecided
	}
	return r, nil
}

func (r *Run) decodeHists(s *runStored) error {
	var err error
	dec := func(b []byte) *hdrhistogram.Histogram {
		if len(b) == 0 || err != nil {
			return nil
		}
		var h *hdrhistogram.Histogram
		h, err = hdrhistogram.Decode(b)
		return h
	}
	r.d.Hist, r.d.OK, r.d.Service, r.acquire = dec(s.Hist), dec(s.OK), dec(s.Service), dec(s.Acquire)
	if len(s.ByTag) > 0 {
		r.byStatement = map[string]*hdrhistogram.Histogram{}
		for k, b := range s.ByTag {
			r.byStatement[k] = dec(b)
		}
	}
	if r.d.Hist == nil {
		r.d.Hist = newHist()
	}
	return err
}

// fromUnits is x units as a duration, rounded to the nanosecond: the
// inverse of inUnits for every duration a run stores.
func fromUnits(x float64, unit time.Duration) time.Duration {
	return time.Duration(math.Round(x * float64(unit)))
}
