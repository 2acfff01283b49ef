// Package profile samples where a target spends its CPU and what that costs
// per request. It samples over one measurement window, with no Starlark in
// it: what workload runs with profile = True, run.profile and
// compare_profiles(exp) are built on.
//
//  1. Sample (perf.go, pprof.go). StartPerf samples a set of processes with
//     Linux perf, on-CPU, with call stacks, kernel frames included: any
//     language, no cooperation from the target. StartPprof reads a Go
//     target's net/http/pprof CPU profile instead. Both start sampling
//     before they return and stop when Stop is called, and leave no file.
//  2. Fold (perfscript.go). perf script's text becomes folded stacks with
//     counts, the format flamegraph.pl and speedscope read ("a;b;c 42"),
//     with the share of frames and samples that resolved to a symbol.
//  3. Figures (figures.go). Per function: its self and total share of the
//     samples, and its CPU per request (share × the target's CPU over the
//     window / the requests served in it).
//  4. Compare (diff.go). Per function, across A/B pairs: the paired
//     difference B - A in µs per request, its interval, a verdict, the
//     multiplicity across functions stated; and the same per frame of the
//     merged call tree, which the differential flame graph draws.
package profile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Recording is a sampling under way, by perf or by pprof: Stop ends the
// window and returns what was sampled.
type Recording interface {
	Stop() (*Profile, error)
}

var (
	_ Recording = (*PerfRecording)(nil)
	_ Recording = (*PprofRecording)(nil)
)

// Profile is the on-CPU samples of one target over one window.
type Profile struct {
	Source   string        // "perf" or "pprof"
	Event    string        // what was sampled: "task-clock" (perf), "cpu" (pprof)
	PeriodNs int64         // the CPU time one sample nominally stands for
	Window   time.Duration // wall time the sampler was on
	// Stacks are the distinct call stacks, root first, sorted by their
	// folded text so equal profiles are equal values.
	Stacks []Stack
	// Samples is the number of samples, the sum over Stacks; CPUNs the CPU
	// time they stand for (the sum of their periods).
	Samples int64
	CPUNs   int64
	// Frames counts frame occurrences over all samples, Resolved those that
	// had a symbol name; ResolvedLeaves the samples whose innermost frame
	// had one. An unresolved frame is named "[dso]" (as flamegraph.pl's
	// stackcollapse-perf does), so its time stays visible, only unnamed.
	Frames, Resolved int64
	ResolvedLeaves   int64
	// Lost is the samples perf says it lost (its ring buffer overflowed).
	Lost int64
	// CutSamples are the samples whose stacks Bound cut short.
	CutSamples int64
	// PIDs are the processes that had samples, ascending.
	PIDs []int
	// Warnings are what makes the profile less than it looks (a window cut
	// short by the size bound, kernel frames not sampled, processes that
	// could not be reached); they travel with it into the record.
	Warnings []string
}

// Stack is one distinct call stack and the samples that ended in it.
type Stack struct {
	Frames  []string // outermost (root) first, innermost (leaf) last
	Samples int64
	CPUNs   int64 // the CPU time those samples stand for
}

// ResolvedShare is the share of frames that resolved to a symbol, NaN for
// an empty profile.
func (p *Profile) ResolvedShare() float64 { return ratio(p.Resolved, p.Frames) }

// ResolvedLeafShare is the share of samples whose leaf frame resolved.
func (p *Profile) ResolvedLeafShare() float64 { return ratio(p.ResolvedLeaves, p.Samples) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return nan
	}
	return float64(a) / float64(b)
}

// Folded writes the stacks as folded text, one "root;...;leaf count" line
// each, sorted: what flamegraph.pl, speedscope and inferno read.
func (p *Profile) Folded() []byte {
	var b bytes.Buffer
	for _, s := range p.Stacks {
		b.WriteString(strings.Join(s.Frames, ";"))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(s.Samples, 10))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseFolded reads folded text ("a;b;c 42" lines, as Folded writes and
// flamegraph tools exchange) into a profile of periodNs per sample. Blank
// lines are skipped; anything else that is not a stack and a count is an
// error naming the line.
func ParseFolded(r io.Reader, periodNs int64) (*Profile, error) {
	f := newFolder()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("folded stacks: line %d: want \"frame;frame count\", got %q", n, clip(line))
		}
		c, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || c < 0 {
			return nil, fmt.Errorf("folded stacks: line %d: count %q is not a whole number", n, clip(line[i+1:]))
		}
		frames := strings.Split(line[:i], ";")
		if slices.Contains(frames, "") {
			return nil, fmt.Errorf("folded stacks: line %d: empty frame in %q", n, clip(line[:i]))
		}
		f.addFolded(frames, c, c*periodNs)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("folded stacks: %w", err)
	}
	p := f.profile()
	p.PeriodNs = periodNs
	return p, nil
}

// maxLine bounds one line of perf script or folded text (a frame line of a
// deep C++ template can be long; a megabyte is not a stack).
const maxLine = 1 << 20

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// folder accumulates samples into distinct stacks.
type folder struct {
	stacks                   map[string]*Stack
	samples, cpu             int64
	frames, resolved, leaves int64
	pids                     map[int]bool
	lost                     int64
}

func newFolder() *folder {
	return &folder{stacks: map[string]*Stack{}, pids: map[int]bool{}}
}

// addFolded adds count samples of one stack whose frames are all taken as
// resolved (folded text keeps no addresses to tell).
func (f *folder) addFolded(frames []string, count, cpuNs int64) {
	f.add(frames, count, cpuNs)
	f.frames += int64(len(frames)) * count
	f.resolved += int64(len(frames)) * count
	f.leaves += count
}

func (f *folder) add(frames []string, count, cpuNs int64) {
	key := strings.Join(frames, ";")
	s, ok := f.stacks[key]
	if !ok {
		s = &Stack{Frames: slices.Clone(frames)}
		f.stacks[key] = s
	}
	s.Samples += count
	s.CPUNs += cpuNs
	f.samples += count
	f.cpu += cpuNs
}

func (f *folder) profile() *Profile {
	p := &Profile{Samples: f.samples, CPUNs: f.cpu, Frames: f.frames, Resolved: f.resolved,
		ResolvedLeaves: f.leaves, Lost: f.lost}
	keys := make([]string, 0, len(f.stacks))
	for k := range f.stacks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p.Stacks = append(p.Stacks, *f.stacks[k])
	}
	for pid := range f.pids {
		p.PIDs = append(p.PIDs, pid)
	}
	slices.Sort(p.PIDs)
	return p
}

// Merge adds profiles of the same target and sampler into one (the runs of
// an arm, for its flame graph): stacks, counts and windows add up.
func Merge(ps ...*Profile) *Profile {
	f := newFolder()
	out := &Profile{}
	for _, p := range ps {
		if p == nil {
			continue
		}
		for _, s := range p.Stacks {
			f.add(s.Frames, s.Samples, s.CPUNs)
		}
		f.frames += p.Frames
		f.resolved += p.Resolved
		f.leaves += p.ResolvedLeaves
		f.lost += p.Lost
		out.CutSamples += p.CutSamples
		for _, pid := range p.PIDs {
			f.pids[pid] = true
		}
		out.Source, out.Event, out.PeriodNs = p.Source, p.Event, p.PeriodNs
		out.Window += p.Window
		for _, w := range p.Warnings {
			if !slices.Contains(out.Warnings, w) {
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	m := f.profile()
	m.Source, m.Event, m.PeriodNs, m.Window, m.Warnings = out.Source, out.Event, out.PeriodNs, out.Window, out.Warnings
	m.CutSamples = out.CutSamples
	return m
}
