package fleet

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchbook/benchbook/builtins/internal/guard"
)

// Outcome is how one agent's part of a run ended.
type Outcome struct {
	Name   string  // e.g. "local/1", "ssh/user@host", "kubernetes/job-2"
	Result *Result // nil when the agent failed before reporting
	// Failure names what went wrong ("died: exit status 2", "hung: no
	// message for 10s", "lost its connection: ..."); "" for a good result.
	Failure string
	// At is when the failure was seen, on this machine's clock.
	At time.Time
}

// Merged is a fleet run: the agents' figures added up, and one row each.
type Merged struct {
	Hist      *hdrhistogram.Histogram // every decided request, µs
	OK        *hdrhistogram.Histogram // successes alone
	Service   *hdrhistogram.Histogram // nil when no agent had one
	Windows   []MergedWindow          // aligned on the common start
	Count     int64
	Intended  int64
	Errors    map[string]int64
	Late      int64
	Tick      time.Duration // open loop: the longest tick an agent sent on
	Dropped   int64
	Undecided int64
	Duration  float64 // s: the longest agent measurement
	CPU       float64 // s of CPU, all agents
	Rows      []Row
	// Incomplete: an agent failed; the figures are the others' alone.
	Incomplete bool
	// Trips: the agents' run guards (their Source prefixed by the agent),
	// and a fatal one per failed agent, so an incomplete run is invalid:
	// compare refuses it and abab runs it again.
	Trips       []guard.Trip
	Interrupted bool
	Warnings    []string
}

// MergedWindow is one window of the merged run.
type MergedWindow struct {
	Hist   *hdrhistogram.Histogram
	OK     int64
	Errors map[string]int64
}

// Row is one agent in the per-agent table.
type Row struct {
	Name        string
	Host        string
	Status      string        // "ok", "interrupted" or the failure
	Count       int64         // successful requests
	RPS         float64       // successes per second
	P99         float64       // ms, over its decided requests
	CPUPerReq   float64       // µs of agent CPU per request
	CPUShare    float64       // of the CPUs it could use, 0..1
	Late        int64         // open loop
	Dropped     int64         // open loop
	Saturated   bool          // its CPU was nearly all used: it may have set the pace
	ClockOffset time.Duration // agent minus coordinator
	// ClockMeasured: ClockOffset was estimated (not for Kubernetes pods,
	// which trust the cluster's clock synchronisation).
	ClockMeasured bool
	LateStart     time.Duration // how long after the common instant its load began
}

// SaturatedShare is the CPU share past which an agent counts as saturated,
// as a local run warns that its generator may have been the bottleneck.
const SaturatedShare = 0.85

// MergeOptions place the agents' windows on one time line.
type MergeOptions struct {
	Start  time.Time     // when every agent's measurement was to begin, coordinator clock
	Window time.Duration // window length
}

// Merge adds up the agents' results. Histograms are added (lossless for
// equal settings), counts summed, each agent's windows shifted to where its
// measurement began relative to the common start.
func Merge(outs []Outcome, o MergeOptions) (*Merged, error) {
	m := &Merged{Errors: map[string]int64{}}
	for _, out := range outs {
		row := Row{Name: out.Name, Status: "ok"}
		if out.Failure != "" || out.Result == nil {
			row.Status = out.Failure
			m.Incomplete = true
			m.Warnings = append(m.Warnings, fmt.Sprintf("incomplete: agent %s %s; the figures are the other agents' alone", out.Name, out.Failure))
			m.Trips = append(m.Trips, guard.Trip{At: sinceStart(out.At, o.Start), Source: "agent " + out.Name,
				Kind: "agent_lost", Fatal: true, Evidence: out.Failure})
			m.Rows = append(m.Rows, row)
			continue
		}
		if err := m.add(out.Result, o, &row); err != nil {
			return nil, fmt.Errorf("agent %s: %w", out.Name, err)
		}
		m.Rows = append(m.Rows, row)
	}
	if m.Hist == nil {
		m.Hist, m.OK = NewHist(), NewHist()
	}
	guard.Sort(m.Trips)
	return m, nil
}

func (m *Merged) add(r *Result, o MergeOptions, row *Row) error {
	h, err := DecodeHist(r.Hist)
	if err != nil {
		return err
	}
	ok, err := DecodeHist(r.OK)
	if err != nil {
		return err
	}
	svc, err := DecodeHist(r.Service)
	if err != nil {
		return err
	}
	if h == nil {
		h = NewHist()
	}
	if ok == nil {
		ok = h
	}
	m.Hist, m.OK, m.Service = addHist(m.Hist, h), addHist(m.OK, ok), addHist(m.Service, svc)
	m.Count += r.Count
	m.Intended += r.Intended
	m.Late += r.Late
	m.Tick = max(m.Tick, time.Duration(r.Tick))
	m.Dropped += r.Dropped
	m.Undecided += r.Undecided
	for k, v := range r.Errors {
		m.Errors[k] += v
	}
	m.Duration = max(m.Duration, r.Duration)
	m.CPU += r.CPU
	m.Interrupted = m.Interrupted || r.Interrupted
	if err := m.addWindows(r, o); err != nil {
		return err
	}
	for _, t := range r.Trips {
		t.Source = "agent " + row.Name + ": " + t.Source
		m.Trips = append(m.Trips, t)
	}
	fillRow(row, r, h)
	m.rowWarnings(row, r, o.Window)
	return nil
}

// sinceStart is t in seconds since the measurement window opened (0 before).
func sinceStart(t, start time.Time) float64 {
	if t.IsZero() || start.IsZero() || t.Before(start) {
		return 0
	}
	return t.Sub(start).Seconds()
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

// addWindows places r's windows: its measurement start, moved onto the
// coordinator's clock, gives the whole number of windows it lags the
// common start by (0 when it started on time).
func (m *Merged) addWindows(r *Result, o MergeOptions) error {
	shift := 0
	if o.Window > 0 && !o.Start.IsZero() && r.MeasureStart != 0 {
		lag := time.Unix(0, r.MeasureStart-r.ClockOffset).Sub(o.Start)
		shift = max(int(math.Round(float64(lag)/float64(o.Window))), 0)
	}
	for i, w := range r.Windows {
		h, err := DecodeHist(w.Hist)
		if err != nil {
			return fmt.Errorf("window %d: %w", i, err)
		}
		j := i + shift
		for len(m.Windows) <= j {
			m.Windows = append(m.Windows, MergedWindow{Errors: map[string]int64{}})
		}
		mw := &m.Windows[j]
		mw.Hist = addHist(mw.Hist, h)
		mw.OK += w.OK
		for k, v := range w.Errors {
			mw.Errors[k] += v
		}
	}
	return nil
}

func fillRow(row *Row, r *Result, h *hdrhistogram.Histogram) {
	row.Host, row.Count, row.Late, row.Dropped = r.Host, r.Count, r.Late, r.Dropped
	row.ClockOffset, row.LateStart = time.Duration(r.ClockOffset), time.Duration(r.LateStart)
	row.ClockMeasured = r.ClockMeasured
	if r.Interrupted {
		row.Status = "interrupted"
	}
	if r.Duration > 0 {
		row.RPS = float64(r.Count) / r.Duration
		row.CPUShare = r.CPU / (r.Duration * float64(max(r.Procs, 1)))
	}
	row.P99 = float64(h.ValueAtQuantile(99)) / 1000
	if n := r.Count + sumErrors(r.Errors); n > 0 {
		row.CPUPerReq = r.CPU * 1e6 / float64(n)
	}
	row.Saturated = row.CPUShare > SaturatedShare
}

func (m *Merged) rowWarnings(row *Row, r *Result, window time.Duration) {
	if window > 0 && row.LateStart > window/10 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("agent %s began %s after the common start: its first windows lack its load",
			row.Name, row.LateStart.Round(time.Millisecond)))
	}
	if row.Saturated {
		m.Warnings = append(m.Warnings, fmt.Sprintf("agent %s used %.0f%% of its %d CPU(s): it may have set the pace, not the target",
			row.Name, row.CPUShare*100, max(r.Procs, 1)))
	}
	for _, w := range r.Warnings {
		m.Warnings = append(m.Warnings, fmt.Sprintf("agent %s: %s", row.Name, w))
	}
}

func sumErrors(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Failed lists the names of the agents that failed, sorted.
func (m *Merged) Failed() []string {
	var out []string
	for _, r := range m.Rows {
		if r.Status != "ok" && r.Status != "interrupted" {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out
}

// NewHist is a latency histogram as agents record them: 1 µs to one hour,
// three significant digits, as the local generator (windows have two).
func NewHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 3_600_000_000, 3) }
