package profile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// CutFrame ends a stack that Bound cut short: the samples below it are
// still counted, in the frames above it, but not by function.
const CutFrame = "[stacks past the bound]"

// Bound keeps the profile within max distinct stacks, so a stored profile
// has a size known in advance whatever the target did. The max/2 stacks
// with the most samples stay whole; every other is cut to its outermost
// frames (8, fewer if need be) and a CutFrame, which merges them. The
// frames kept keep their exact share (a flame graph's outer frames are as
// wide as before); only the functions deep inside rare stacks lose
// samples, and CutSamples and a warning say how many. It returns whether
// it cut anything.
func (p *Profile) Bound(max int) bool {
	if max < 2 || len(p.Stacks) <= max {
		return false
	}
	byWeight := slices.Clone(p.Stacks)
	slices.SortFunc(byWeight, func(a, b Stack) int {
		if c := cmp.Compare(b.Samples, a.Samples); c != 0 {
			return c
		}
		return strings.Compare(strings.Join(a.Frames, ";"), strings.Join(b.Frames, ";"))
	})
	whole, rest := byWeight[:max/2], byWeight[max/2:]
	for _, depth := range []int{8, 4, 2, 1, 0} {
		f := newFolder()
		for _, s := range whole {
			f.add(s.Frames, s.Samples, s.CPUNs)
		}
		var cut int64
		for _, s := range rest {
			frames := append(slices.Clone(s.Frames[:min(depth, len(s.Frames))]), CutFrame)
			f.add(frames, s.Samples, s.CPUNs)
			cut += s.Samples
		}
		if len(f.stacks) > max && depth > 0 {
			continue
		}
		kept := f.profile()
		p.Stacks = kept.Stacks
		p.CutSamples += cut
		p.Warnings = append(p.Warnings, fmt.Sprintf(
			"%d of %d samples (%.1f %%) were in %d rare stacks past the bound of %d distinct stacks: they are cut to their outer %d frames, so a function deep inside them is undercounted by that much at most",
			cut, p.Samples, 100*float64(cut)/float64(max1(p.Samples)), len(rest), max, depth))
		return true
	}
	return true // not reached: depth 0 merges every cut stack into one
}

func max1(n int64) int64 { return max(n, 1) }

// WithRoot is the profile with name as the outermost frame of every stack:
// how the profiles of several targets of one run are told apart once
// merged ("postgres;PostgresMain;..." beside "demo;runtime.goexit;...").
func (p *Profile) WithRoot(name string) *Profile {
	out := *p
	out.Stacks = make([]Stack, len(p.Stacks))
	for i, s := range p.Stacks {
		out.Stacks[i] = Stack{Frames: append([]string{name}, s.Frames...), Samples: s.Samples, CPUNs: s.CPUNs}
	}
	out.Frames += p.Samples
	out.Resolved += p.Samples
	out.PIDs = slices.Clone(p.PIDs)
	out.Warnings = slices.Clone(p.Warnings)
	return &out
}
