package profile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Run is one profiled run: its profile and what the target spent in it.
type Run struct {
	Profile *Profile
	Cost    Cost
}

// DiffOptions shape a differential profile; the zero value is the default.
type DiffOptions struct {
	ALabel, BLabel string // "A" and "B" when empty
	// FDR is the false discovery rate the verdicts are held to across the
	// functions tested (Benjamini-Hochberg); 0 means DefaultFDR.
	FDR float64
	// MinShare is the share of CPU, in either arm on average, below which
	// a function or frame is not tested (it would dilute the others'
	// multiplicity and cannot move the headline); 0 means DefaultMinShare.
	MinShare float64
}

// The defaults.
const (
	DefaultFDR      = 0.05
	DefaultMinShare = 0.01
)

// Estimate is B against A in one function (or frame) across the pairs,
// in µs of the target's CPU per request.
type Estimate struct {
	A, B  float64 // mean over the pairs
	Delta float64 // mean of the pairs' B - A: negative when B spends less
	// Low and High bound Delta at Confidence, which the multiplicity rule
	// sets (DiffOptions.FDR over the functions tested, adjusted as
	// Benjamini and Yekutieli's false-coverage-rate intervals are, so an
	// interval excludes 0 exactly when the verdict is not "~"). NaN with
	// one pair.
	Low, High  float64
	Confidence float64
	P          float64 // the paired test's two-sided p, unadjusted
	PAdj       float64 // Benjamini-Hochberg adjusted p
	Tested     bool    // above MinShare, so in the multiplicity family
	// Verdict is IMPROVES when B spends less CPU per request in it,
	// WORSENS when more, "~" when the evidence does not say; Reason says
	// why "~".
	Verdict string
	Reason  string
	Deltas  []float64 // B_i - A_i, pair by pair
}

// FunctionDiff is one function's change, counting its callees (Total) and
// its own code only (Self).
type FunctionDiff struct {
	Name        string
	Total, Self Estimate
}

// DiffNode is one frame of the call tree merged over every run: a path
// from the root, with its change counting everything below it.
type DiffNode struct {
	Name string
	Estimate
	Children []*DiffNode // by name
}

// Diff is a differential profile: per function and per frame, B - A in CPU
// per request across the pairs.
type Diff struct {
	ALabel, BLabel string
	Pairs          int
	// Functions are ranked by the size of their total change, the tested
	// ones first.
	Functions []FunctionDiff
	Tree      *DiffNode
	// Method and Multiplicity say how, in words, for the record.
	Method, Multiplicity string
	Warnings             []string
}

// Compare makes the differential profile of the pairs (a[i], b[i]).
func Compare(a, b []Run, o DiffOptions) (*Diff, error) {
	o = o.withDefaults()
	if len(a) != len(b) || len(a) == 0 {
		return nil, fmt.Errorf("profile: a differential needs pairs: %d %s and %d %s runs", len(a), o.ALabel, len(b), o.BLabel)
	}
	fa, err := figuresOf(a, o.ALabel)
	if err != nil {
		return nil, err
	}
	fb, err := figuresOf(b, o.BLabel)
	if err != nil {
		return nil, err
	}
	d := &Diff{ALabel: o.ALabel, BLabel: o.BLabel, Pairs: len(a)}
	d.Method = pairedTest(make([]float64, len(a)), 0).method + ", in µs of the target's CPU per request"
	floor := quantum(fa, fb)
	d.Functions = compareFunctions(fa, fb, floor, o, d)
	d.Tree = compareTree(a, b, fa, fb, floor, o)
	for i := range a {
		d.Warnings = append(d.Warnings, runWarnings(o.ALabel, i, fa[i])...)
		d.Warnings = append(d.Warnings, runWarnings(o.BLabel, i, fb[i])...)
	}
	if len(a) < 2 {
		d.Warnings = append(d.Warnings, "one pair: no interval and no verdict; run more pairs")
	}
	return d, nil
}

func (o DiffOptions) withDefaults() DiffOptions {
	o.ALabel, o.BLabel = or(o.ALabel, "A"), or(o.BLabel, "B")
	if o.FDR <= 0 || o.FDR >= 1 {
		o.FDR = DefaultFDR
	}
	if o.MinShare <= 0 {
		o.MinShare = DefaultMinShare
	}
	return o
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runFigures is one run's figures, indexed.
type runFigures struct {
	*Figures
	samples     int64
	total, self map[string]float64 // µs per request
	tshare      map[string]float64
	sshare      map[string]float64
}

func figuresOf(runs []Run, arm string) ([]runFigures, error) {
	out := make([]runFigures, len(runs))
	for i, r := range runs {
		if r.Profile == nil {
			return nil, fmt.Errorf("profile: %s run %d has no profile", arm, i+1)
		}
		f, err := r.Profile.Figures(r.Cost)
		if err != nil {
			return nil, fmt.Errorf("%w (%s run %d)", err, arm, i+1)
		}
		rf := runFigures{Figures: f, samples: r.Profile.Samples, total: map[string]float64{}, self: map[string]float64{},
			tshare: map[string]float64{}, sshare: map[string]float64{}}
		for _, fn := range f.Functions {
			rf.total[fn.Name], rf.self[fn.Name] = fn.TotalUsPerReq, fn.SelfUsPerReq
			rf.tshare[fn.Name], rf.sshare[fn.Name] = fn.Total, fn.Self
		}
		out[i] = rf
	}
	return out, nil
}

// quantum is the smallest change a pair can show: one sample's worth of
// µs per request, averaged over the runs.
func quantum(fa, fb []runFigures) float64 {
	var s float64
	for i := range fa {
		s += max(fa[i].UsPerReq/float64(fa[i].samples), fb[i].UsPerReq/float64(fb[i].samples))
	}
	return s / float64(len(fa))
}

func runWarnings(arm string, i int, f runFigures) []string {
	var out []string
	for _, w := range f.Warnings {
		out = append(out, fmt.Sprintf("%s run %d: %s", arm, i+1, w))
	}
	return out
}

// series are one quantity's per-pair values in each arm.
type series struct {
	key            string
	a, b           []float64
	shareA, shareB float64   // mean share of CPU
	qa, qb         []float64 // one sample's worth of µs per request, per run
}

// quanta are one sample's worth of µs per request in each run.
func quanta(rs []runFigures) []float64 {
	q := make([]float64, len(rs))
	for i, r := range rs {
		q[i] = r.UsPerReq / float64(max(r.samples, 1))
	}
	return q
}

func compareFunctions(fa, fb []runFigures, floor float64, o DiffOptions, d *Diff) []FunctionDiff {
	names := map[string]bool{}
	for _, rs := range [][]runFigures{fa, fb} {
		for _, r := range rs {
			for n := range r.total {
				names[n] = true
			}
		}
	}
	var total, self []series
	for n := range names {
		total = append(total, seriesOf(n, fa, fb, func(r runFigures) (float64, float64) { return r.total[n], r.tshare[n] }))
		self = append(self, seriesOf(n, fa, fb, func(r runFigures) (float64, float64) { return r.self[n], r.sshare[n] }))
	}
	te := estimateFamily(total, floor, o)
	se := estimateFamily(self, floor, o)
	tested := 0
	out := make([]FunctionDiff, 0, len(total))
	for i, s := range total {
		out = append(out, FunctionDiff{Name: s.key, Total: te[i], Self: se[i]})
		if te[i].Tested {
			tested++
		}
	}
	slices.SortFunc(out, func(x, y FunctionDiff) int {
		if x.Total.Tested != y.Total.Tested {
			if x.Total.Tested {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(math.Abs(y.Total.Delta), math.Abs(x.Total.Delta)); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	d.Multiplicity = fmt.Sprintf("Benjamini-Hochberg at a false discovery rate of %g across the %d functions above %g %% of CPU in either arm (%d below, not tested); intervals adjusted to match (false coverage rate, Benjamini-Yekutieli)",
		o.FDR, tested, 100*o.MinShare, len(out)-tested)
	return out
}

func seriesOf(key string, fa, fb []runFigures, get func(runFigures) (us, share float64)) series {
	s := series{key: key, a: make([]float64, len(fa)), b: make([]float64, len(fb)), qa: quanta(fa), qb: quanta(fb)}
	for i := range fa {
		var sh float64
		s.a[i], sh = get(fa[i])
		s.shareA += sh / float64(len(fa))
		s.b[i], sh = get(fb[i])
		s.shareB += sh / float64(len(fb))
	}
	return s
}

// estimateFamily tests every series above MinShare as one family:
// Benjamini-Hochberg selects the R smallest p that its step-up rule
// allows, and every interval is at confidence 1 - R·q/m (1 - q/m when
// R = 0), so a tested interval excludes 0 exactly for the selected ones.
func estimateFamily(ss []series, floor float64, o DiffOptions) []Estimate {
	out := make([]Estimate, len(ss))
	var family []int
	res := make([]pairedResult, len(ss))
	for i, s := range ss {
		d := make([]float64, len(s.a))
		for k := range d {
			d[k] = s.b[k] - s.a[k]
		}
		res[i] = s.test(d, floor)
		out[i] = Estimate{A: mean(s.a), B: mean(s.b), Delta: res[i].estimate, P: res[i].p, PAdj: nan,
			Low: nan, High: nan, Confidence: nan, Verdict: "~", Deltas: d}
		if max(s.shareA, s.shareB) >= o.MinShare {
			out[i].Tested = true
			family = append(family, i)
		} else {
			out[i].Reason = fmt.Sprintf("below %g %% of CPU in both arms: not tested", 100*o.MinShare)
		}
	}
	m := len(family)
	if m == 0 {
		return out
	}
	slices.SortFunc(family, func(x, y int) int { return cmp.Compare(pOrOne(res[x].p), pOrOne(res[y].p)) })
	r := 0
	for k, i := range family {
		if pOrOne(res[i].p) <= float64(k+1)*o.FDR/float64(m) {
			r = k + 1
		}
	}
	conf := 1 - float64(max(r, 1))*o.FDR/float64(m)
	adj := math.Inf(1)
	for k := m - 1; k >= 0; k-- {
		i := family[k]
		adj = min(adj, pOrOne(res[i].p)*float64(m)/float64(k+1), 1)
		e := &out[i]
		e.PAdj, e.Confidence = adj, conf
		e.Low, e.High = res[i].interval(conf)
		switch {
		case res[i].n < 2:
			e.Reason = "one pair: no interval"
		case k < r && e.Delta < 0:
			e.Verdict = "IMPROVES"
		case k < r && e.Delta > 0:
			e.Verdict = "WORSENS"
		case res[i].absent != nil:
			e.Reason = fmt.Sprintf("adjusted p = %.3g > %g (Benjamini-Hochberg across %d): sampled only in %s, but the other arm's sampling could have missed up to %s µs per request of it; profile that arm at a higher rate or longer",
				adj, o.FDR, m, map[bool]string{true: "B", false: "A"}[res[i].absent.sign > 0], fmtUs(-math.Log((1-conf)/2)/res[i].absent.exposure))
		default:
			e.Reason = fmt.Sprintf("adjusted p = %.3g > %g (Benjamini-Hochberg across %d)", adj, o.FDR, m)
		}
	}
	return out
}

// test is the paired test of the series: a function sampled in every run
// of one arm and in none of the other is decided on that evidence
// (absentTest: the absent arm's zeros bound what it spends there by its
// own sampling, not by one sample of the other arm); any other, a paired
// t on the differences with the spread floored at one sample's worth.
func (s series) test(d []float64, floor float64) pairedResult {
	allZero := func(xs []float64) bool { return !slices.ContainsFunc(xs, func(x float64) bool { return x != 0 }) }
	allSeen := func(xs []float64) bool { return !slices.ContainsFunc(xs, func(x float64) bool { return x <= 0 }) }
	exposure := func(q []float64) float64 {
		var e float64
		for _, x := range q {
			if x > 0 && !math.IsInf(x, 0) {
				e += 1 / x
			}
		}
		return e
	}
	switch {
	case len(d) >= 2 && allZero(s.a) && allSeen(s.b):
		return absentTest(s.b, mean(s.qb), exposure(s.qa), +1)
	case len(d) >= 2 && allZero(s.b) && allSeen(s.a):
		return absentTest(s.a, mean(s.qa), exposure(s.qb), -1)
	}
	return pairedTest(d, floor)
}

func fmtUs(x float64) string { return fmt.Sprintf("%.3g", x) }

func pOrOne(p float64) float64 {
	if math.IsNaN(p) {
		return 1
	}
	return p
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// treeNode is a frame of the merged call tree with its inclusive CPU per
// run.
type treeNode struct {
	name     string
	ns       map[int]int64 // run index (A runs, then B runs) -> inclusive CPU ns
	children map[string]*treeNode
}

func compareTree(a, b []Run, fa, fb []runFigures, floor float64, o DiffOptions) *DiffNode {
	root := &treeNode{name: "all", ns: map[int]int64{}, children: map[string]*treeNode{}}
	runs := append(slices.Clone(a), b...)
	for ri, r := range runs {
		for _, s := range r.Profile.Stacks {
			n := root
			n.ns[ri] += s.CPUNs
			for _, fr := range s.Frames {
				c, ok := n.children[fr]
				if !ok {
					c = &treeNode{name: fr, ns: map[int]int64{}, children: map[string]*treeNode{}}
					n.children[fr] = c
				}
				c.ns[ri] += s.CPUNs
				n = c
			}
		}
	}
	figs := append(slices.Clone(fa), fb...)
	var flat []*treeNode
	var walk func(*treeNode)
	walk = func(n *treeNode) {
		flat = append(flat, n)
		for _, k := range sortedKeys(n.children) {
			walk(n.children[k])
		}
	}
	walk(root)
	ss := make([]series, len(flat))
	for i, n := range flat {
		s := series{key: n.name, a: make([]float64, len(a)), b: make([]float64, len(b)), qa: quanta(fa), qb: quanta(fb)}
		for ri := range runs {
			share := float64(n.ns[ri]) / float64(runs[ri].Profile.CPUNs)
			us := share * figs[ri].UsPerReq
			if ri < len(a) {
				s.a[ri] = us
				s.shareA += share / float64(len(a))
			} else {
				s.b[ri-len(a)] = us
				s.shareB += share / float64(len(b))
			}
		}
		ss[i] = s
	}
	est := estimateFamily(ss[1:], floor, o) // the root is the headline, not a frame
	nodes := map[*treeNode]*DiffNode{}
	for i, n := range flat {
		dn := &DiffNode{Name: n.name}
		if i == 0 {
			rootEst := estimateFamily(ss[:1], floor, DiffOptions{FDR: o.FDR, MinShare: 1e-300})[0]
			dn.Estimate = rootEst
		} else {
			dn.Estimate = est[i-1]
		}
		nodes[n] = dn
	}
	for _, n := range flat {
		for _, k := range sortedKeys(n.children) {
			nodes[n].Children = append(nodes[n].Children, nodes[n.children[k]])
		}
	}
	return nodes[root]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
