package profile

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

var nan = math.NaN()

// Function is one function's part of a profile.
type Function struct {
	Name string
	// Self is the share of CPU (of the sampled CPU time) spent in the
	// function itself, as the innermost frame; Total the share of samples
	// with the function anywhere on the stack, counted once per sample
	// however deep it recurses.
	Self, Total float64
	// SelfUsPerReq and TotalUsPerReq are those shares of the target's CPU
	// per request served in the window, in µs (Figures sets them).
	SelfUsPerReq, TotalUsPerReq float64
}

// Functions are the profile's functions by total share, then name.
func (p *Profile) Functions() []Function {
	self, total := p.functionNs()
	out := make([]Function, 0, len(total))
	for name, t := range total {
		out = append(out, Function{Name: name, Self: share(self[name], p.CPUNs), Total: share(t, p.CPUNs),
			SelfUsPerReq: nan, TotalUsPerReq: nan})
	}
	slices.SortFunc(out, func(a, b Function) int {
		if a.Total != b.Total {
			if a.Total > b.Total {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// functionNs sums each function's CPU as leaf (self) and anywhere on the
// stack (total, once per stack).
func (p *Profile) functionNs() (self, total map[string]int64) {
	self, total = map[string]int64{}, map[string]int64{}
	seen := map[string]bool{}
	for _, s := range p.Stacks {
		clear(seen)
		for _, fr := range s.Frames {
			if !seen[fr] {
				seen[fr] = true
				total[fr] += s.CPUNs
			}
		}
		self[s.Frames[len(s.Frames)-1]] += s.CPUNs
	}
	return self, total
}

func share(part, whole int64) float64 {
	if whole <= 0 {
		return nan
	}
	return float64(part) / float64(whole)
}

// Cost is what the target spent over the window the profile covers.
type Cost struct {
	Requests int64 // requests served in the window
	// CPUUs is the target's CPU time over the window in µs, as the run
	// measured it (cgroup, /proc); 0 takes the CPU the samples stand for.
	CPUUs float64
}

// Figures are a profile's functions in CPU per request.
type Figures struct {
	Functions []Function
	Requests  int64
	CPUUs     float64 // the CPU the shares were taken of
	// CPUSource says where CPUUs came from: "target" (Cost.CPUUs) or
	// "samples" (Profile.CPUNs).
	CPUSource string
	UsPerReq  float64 // CPUUs / Requests
	// Coverage is the sampled CPU over the target's: near 1 when the
	// sampler saw every process of the target for the whole window; far
	// below it names a gap (a process not reached, kernel frames not
	// sampled) that a warning says. NaN when CPUSource is "samples".
	Coverage float64
	Warnings []string
}

// MinCoverage is the share of the target's CPU below which the samples are
// said not to cover the target, and
// MaxCoverage the share above which they stand for more than the target.
const (
	MinCoverage = 0.8
	MaxCoverage = 1.25
)

// Figures turns the profile's shares into CPU per request.
func (p *Profile) Figures(c Cost) (*Figures, error) {
	if c.Requests <= 0 {
		return nil, fmt.Errorf("profile: CPU per request needs the requests served in the window, got %d", c.Requests)
	}
	if c.CPUUs < 0 || math.IsNaN(c.CPUUs) || math.IsInf(c.CPUUs, 0) {
		return nil, fmt.Errorf("profile: the target's CPU must be a finite number of µs >= 0, got %g", c.CPUUs)
	}
	if p.CPUNs <= 0 {
		return nil, errors.New("profile: no samples: the target did not run on a CPU in the window, or the sampler did not reach it")
	}
	fig := &Figures{Requests: c.Requests, CPUUs: c.CPUUs, CPUSource: "target", Coverage: nan}
	sampled := float64(p.CPUNs) / 1e3
	if c.CPUUs == 0 {
		fig.CPUUs, fig.CPUSource = sampled, "samples"
	} else {
		fig.Coverage = sampled / c.CPUUs
		if fig.Coverage < MinCoverage {
			fig.Warnings = append(fig.Warnings, fmt.Sprintf(
				"the samples stand for %.0f %% of the target's CPU in the window (%.0f of %.0f µs): a process of the target was not sampled, or kernel frames were not",
				100*fig.Coverage, sampled, c.CPUUs))
		}
		if fig.Coverage > MaxCoverage {
			fig.Warnings = append(fig.Warnings, fmt.Sprintf(
				"the samples stand for %.0f %% of the target's CPU in the window (%.0f of %.0f µs): processes outside the target were sampled, or its CPU was measured over a shorter window",
				100*fig.Coverage, sampled, c.CPUUs))
		}
	}
	fig.UsPerReq = fig.CPUUs / float64(c.Requests)
	for _, f := range p.Functions() {
		f.SelfUsPerReq, f.TotalUsPerReq = f.Self*fig.UsPerReq, f.Total*fig.UsPerReq
		fig.Functions = append(fig.Functions, f)
	}
	return fig, nil
}
