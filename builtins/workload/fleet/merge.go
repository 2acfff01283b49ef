package fleet

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/guard"
	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// Outcome is how one agent's part of a run ended.
type Outcome struct {
	Name   string  // e.g. "local/1", "ssh/user@host", "kubernetes/job-2"
	Report *Report // nil when the agent failed before reporting
	// Failure names what went wrong ("died: exit status 2", "hung: no
	// message for 10s", "lost its connection: ..."); "" for a good result.
	Failure string
	// At is when the failure was seen, on this machine's clock.
	At time.Time
}

// Merged is a fleet run: the agents' runs merged into one (loadgen's
// Result, as a local run has), and one row per agent. The merged run's
// trips hold the agents' run guards (their Source prefixed by the agent)
// and a fatal one per failed agent, so an incomplete run is invalid:
// compare refuses it and abab runs it again.
type Merged struct {
	*loadgen.Result
	Rows []Row
	// Incomplete: an agent failed; the figures are the others' alone.
	Incomplete bool
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
	Start    time.Time     // when every agent's measurement was to begin, coordinator clock
	Window   time.Duration // window length
	Duration time.Duration // the measurement window's length, for the windows' rates
}

// Merge adds up the agents' runs (loadgen.Result.Merge), each agent's
// windows shifted to where its measurement began relative to the common
// start, its trips and warnings named after it.
func Merge(outs []Outcome, o MergeOptions) (*Merged, error) {
	m := &Merged{Result: loadgen.NewResult()}
	for _, out := range outs {
		row := Row{Name: out.Name, Status: "ok"}
		if out.Failure != "" || out.Report == nil || out.Report.Run == nil {
			row.Status = out.Failure
			m.Incomplete = true
			m.Warnings = append(m.Warnings, fmt.Sprintf("incomplete: agent %s %s; the figures are the other agents' alone", out.Name, out.Failure))
			lost := guard.Trip{At: sinceStart(out.At, o.Start), Source: "agent " + out.Name,
				Kind: "agent_lost", Fatal: true, Evidence: out.Failure}
			m.Trips = append(m.Trips, lost)
			m.Warnings = append(m.Warnings, loadgen.TripWarnings([]guard.Trip{lost})...)
			m.Rows = append(m.Rows, row)
			continue
		}
		rep := out.Report
		fillRow(&row, rep)
		run := *rep.Run
		run.Warnings = append(rowWarnings(row, rep, o.Window), prefixed(row.Name, rep.Run.Warnings)...)
		run.Trips = nil
		for _, t := range rep.Run.Trips {
			t.Source = "agent " + row.Name + ": " + t.Source
			run.Trips = append(run.Trips, t)
		}
		m.Merge(&run, windowShift(rep, o))
		m.Rows = append(m.Rows, row)
	}
	m.WindowFigures(o.Window, o.Duration)
	guard.Sort(m.Trips)
	return m, nil
}

// sinceStart is t in seconds since the measurement window opened (0 before).
func sinceStart(t, start time.Time) float64 {
	if t.IsZero() || start.IsZero() || t.Before(start) {
		return 0
	}
	return t.Sub(start).Seconds()
}

// windowShift is how many whole windows rep's measurement began after the
// common start, its start moved onto the coordinator's clock (0 when it
// started on time).
func windowShift(rep *Report, o MergeOptions) int {
	if o.Window <= 0 || o.Start.IsZero() || rep.MeasureStart == 0 {
		return 0
	}
	lag := time.Unix(0, rep.MeasureStart-rep.ClockOffset).Sub(o.Start)
	return max(int(math.Round(float64(lag)/float64(o.Window))), 0)
}

func fillRow(row *Row, rep *Report) {
	r := rep.Run
	row.Host, row.Count, row.Late, row.Dropped = rep.Host, r.Count, r.Late, r.Dropped
	row.ClockOffset, row.LateStart = time.Duration(rep.ClockOffset), time.Duration(rep.LateStart)
	row.ClockMeasured = rep.ClockMeasured
	if r.Interrupted {
		row.Status = "interrupted"
	}
	if secs := r.Measured.Seconds(); secs > 0 {
		row.RPS = float64(r.Count) / secs
		row.CPUShare = r.CPU.Seconds() / (secs * float64(max(rep.Procs, 1)))
	}
	if r.Hist != nil {
		row.P99 = loadgen.QuantileMs(r.Hist, 99)
	}
	if n := r.Count + loadgen.SumErrors(r.Errors); n > 0 {
		row.CPUPerReq = r.CPU.Seconds() * 1e6 / float64(n)
	}
	row.Saturated = row.CPUShare > SaturatedShare
}

// rowWarnings say what makes an agent's share less than it seems.
func rowWarnings(row Row, rep *Report, window time.Duration) []string {
	var out []string
	if window > 0 && row.LateStart > window/10 {
		out = append(out, fmt.Sprintf("agent %s began %s after the common start: its first windows lack its load",
			row.Name, row.LateStart.Round(time.Millisecond)))
	}
	if row.Saturated {
		out = append(out, fmt.Sprintf("agent %s used %.0f%% of its %d CPU(s): it may have set the pace, not the target",
			row.Name, row.CPUShare*100, max(rep.Procs, 1)))
	}
	return out
}

func prefixed(agent string, warnings []string) []string {
	out := make([]string, len(warnings))
	for i, w := range warnings {
		out[i] = fmt.Sprintf("agent %s: %s", agent, w)
	}
	return out
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
