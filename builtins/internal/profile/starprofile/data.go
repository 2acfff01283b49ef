// Package starprofile is the Starlark face of package profile: profiles as
// values. It gives a run's profile as the notebook sees it (run.profile,
// type "profile") and the differential profile of an experiment's pairs
// (compare_profiles(exp), type "profile_comparison"), each stored by the
// cache and shown in the record with its flame graphs, its table and its
// folded stacks.
//
// What is stored is Data, one per run: the stacks (bounded by MaxStacks)
// and the counts, never a figure derived from them, so a cached value
// shows what a fresh one would, computed by the same code.
package starprofile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchbook/benchbook/builtins/internal/profile"
)

// MaxStacks bounds the distinct stacks a run's stored profile keeps (see
// profile.Bound): at ~40 frames of ~25 bytes each, 2,000 stacks are about
// 2 MB of folded text before compression, 100-200 KB after.
const MaxStacks = 2000

// Data is one run's profile as stored.
type Data struct {
	Targets  []string `json:"targets"` // what was sampled ("postgres", "process hotserver")
	Source   string   `json:"source"`  // "perf" or "pprof"
	Event    string   `json:"event"`   // "task-clock"
	PeriodNs int64    `json:"period_ns"`
	WindowS  float64  `json:"window_s"` // how long sampling was on
	// Requests are the run's successful requests in the window: the
	// divisor of every figure per request.
	Requests       int64    `json:"requests"`
	Samples        int64    `json:"samples"`
	CPUNs          int64    `json:"cpu_ns"` // the CPU the samples stand for
	Frames         int64    `json:"frames"`
	Resolved       int64    `json:"resolved"`
	ResolvedLeaves int64    `json:"resolved_leaves"`
	Lost           int64    `json:"lost,omitempty"`
	CutSamples     int64    `json:"cut_samples,omitempty"`
	Processes      int      `json:"processes"` // processes with samples
	Warnings       []string `json:"warnings,omitempty"`
	// Stacks are gzip'd lines "root;...;leaf samples cpu_ns", sorted.
	Stacks []byte `json:"stacks_gz"`
}

// FromProfile is what a run stores of p: its stacks bounded to MaxStacks,
// for requests served in the window by targets.
func FromProfile(p *profile.Profile, targets []string, requests int64) (*Data, error) {
	p.Bound(MaxStacks)
	d := &Data{Targets: targets, Source: p.Source, Event: p.Event, PeriodNs: p.PeriodNs, WindowS: p.Window.Seconds(),
		Requests: requests, Samples: p.Samples, CPUNs: p.CPUNs, Frames: p.Frames, Resolved: p.Resolved,
		ResolvedLeaves: p.ResolvedLeaves, Lost: p.Lost, CutSamples: p.CutSamples, Processes: len(p.PIDs),
		Warnings: p.Warnings}
	var raw bytes.Buffer
	for _, s := range p.Stacks {
		fmt.Fprintf(&raw, "%s %d %d\n", strings.Join(s.Frames, ";"), s.Samples, s.CPUNs)
	}
	var z bytes.Buffer
	w, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	d.Stacks = z.Bytes()
	return d, nil
}

// maxStackText bounds what a stored profile may inflate to: a damaged or
// hostile cache entry cannot make a reader allocate more.
const maxStackText = 256 << 20

// Profile rebuilds the profile the data was made from.
func (d *Data) Profile() (*profile.Profile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(d.Stacks))
	if err != nil {
		return nil, fmt.Errorf("profile: stored stacks: %w", err)
	}
	p := &profile.Profile{Source: d.Source, Event: d.Event, PeriodNs: d.PeriodNs,
		Window: time.Duration(d.WindowS * float64(time.Second)), Frames: d.Frames, Resolved: d.Resolved,
		ResolvedLeaves: d.ResolvedLeaves, Lost: d.Lost, CutSamples: d.CutSamples, Warnings: slices.Clone(d.Warnings)}
	sc := bufio.NewScanner(io.LimitReader(zr, maxStackText))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		s, err := parseStack(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("profile: stored stacks: line %d: %w", n, err)
		}
		p.Stacks = append(p.Stacks, s)
		p.Samples += s.Samples
		p.CPUNs += s.CPUNs
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("profile: stored stacks: %w", err)
	}
	if p.Samples != d.Samples || p.CPUNs != d.CPUNs {
		return nil, fmt.Errorf("profile: stored stacks hold %d samples (%d ns), the profile says %d (%d ns)", p.Samples, p.CPUNs, d.Samples, d.CPUNs)
	}
	return p, nil
}

// parseStack reads "frames samples cpu_ns"; frames may hold spaces (C++
// names), so the numbers are the last two fields.
func parseStack(line string) (profile.Stack, error) {
	i := strings.LastIndexByte(line, ' ')
	j := strings.LastIndexByte(line[:max(i, 0)], ' ')
	if j <= 0 {
		return profile.Stack{}, fmt.Errorf("want \"frames samples cpu_ns\", got %q", line)
	}
	n, err1 := strconv.ParseInt(line[j+1:i], 10, 64)
	ns, err2 := strconv.ParseInt(line[i+1:], 10, 64)
	if err1 != nil || err2 != nil || n < 0 || ns < 0 {
		return profile.Stack{}, fmt.Errorf("bad counts in %q", line)
	}
	return profile.Stack{Frames: strings.Split(line[:j], ";"), Samples: n, CPUNs: ns}, nil
}

// Run is the data as package profile compares runs: the CPU per request
// is the samples' CPU over the requests (Cost.CPUUs 0).
func (d *Data) Run() (profile.Run, error) {
	p, err := d.Profile()
	if err != nil {
		return profile.Run{}, err
	}
	return profile.Run{Profile: p, Cost: profile.Cost{Requests: d.Requests}}, nil
}

// merged is the profile of several runs (an arm's), bounded, with their
// requests summed: its CPU per request is the arm's over all its runs.
func merged(ds []*Data) (*Data, error) {
	var ps []*profile.Profile
	var requests int64
	var window float64
	var targets []string
	for _, d := range ds {
		p, err := d.Profile()
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
		requests += d.Requests
		window += d.WindowS
		for _, t := range d.Targets {
			if !slices.Contains(targets, t) {
				targets = append(targets, t)
			}
		}
	}
	m := profile.Merge(ps...)
	out, err := FromProfile(m, targets, requests)
	if err != nil {
		return nil, err
	}
	out.Processes = 0 // processes of different runs are not one set
	for _, d := range ds {
		out.Processes += d.Processes
	}
	out.WindowS = window
	return out, nil
}
