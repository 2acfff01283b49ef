// Package capacity finds the highest load at which a system meets its SLO,
// with an interval: the search behind @std/capacity.star, without
// Starlark, so that a simulation with known truth drives the very code a
// notebook runs.
//
// The search, in four steps:
//
//  1. Step up: one run at Lo, then at each level Factor times the last, up
//     to Hi, until a run breaks the SLO.
//  2. Bisect: one run at the level between the highest that met the SLO
//     and the lowest that broke it, until the two are adjacent (the
//     resolution apart).
//  3. Confirm both ends with repeats (judge.go): the lower end must be
//     judged passing and the upper failing by a sequential sign test
//     whose chance of a wrong judgement is at most (1 - Confidence) / 2
//     at each end, so the interval holds the capacity with at least
//     Confidence (a union bound over its two ends), counting only the
//     runs made after the level was chosen (its first run chose it, so it
//     is left out). An end judged the other way moves the bracket and the
//     search bisects again; an end the repeats cannot judge widens the
//     interval by one resolution and its neighbour is confirmed instead.
//  4. Report: the interval is [the level judged passing, the level judged
//     failing) (for whole numbers, up to that level less one); the value is
//     the highest level inside it whose runs mostly met the SLO.
//
// A level meets the SLO when its runs meet every limit more often than not
// (its median run does; an invalid run does not meet it). The search
// refuses to report a capacity when a run at a level that sets its
// interval says the load generator may have set the pace (the crossing
// would be the generator's) or a guard made it invalid.
package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/benchbook/benchbook/runtime/stats"
)

// Limit is one limit of an SLO on a run figure.
type Limit struct {
	Metric string  // the figure's name: "p99" (ms), "error_rate", "mean", ...
	Value  float64 // the limit
	Max    bool    // the figure must stay at or below Value (latency, errors); else at or above it
}

// Holds says whether figure x meets the limit; an unknown figure (NaN)
// does not.
func (l Limit) Holds(x float64) bool {
	if math.IsNaN(x) {
		return false
	}
	if l.Max {
		return x <= l.Value
	}
	return x >= l.Value
}

func (l Limit) String() string {
	op := "≥"
	if l.Max {
		op = "≤"
	}
	return fmt.Sprintf("%s %s %s", l.Metric, op, num(l.Value))
}

// excess is how far x is past the limit, as a ratio (> 1 beyond it).
func (l Limit) excess(x float64) float64 {
	if l.Max {
		return x / l.Value
	}
	return l.Value / x
}

// Reading is what one run at one level showed.
type Reading struct {
	Values   []float64 // each limit's figure, in the order of the limits
	Busy     bool      // the box was busy during the run (a load gate, foreign CPU)
	GenBound string    // why the load generator may have set the pace; "" when it did not
	Invalid  string    // why a guard made the run invalid; "" when valid
	Seconds  float64   // wall time the run took here (0 from a checkpoint)
}

// Measure runs the load at level once more: its repeat'th run there (from
// 0). A notebook's measure checkpoints each (level, repeat), so a search
// run again replays its runs from the cache and goes on where it stopped.
type Measure func(level float64, repeat int) (Reading, error)

// Options shape a search.
type Options struct {
	Lo, Hi     float64 // the range of loads, Lo > 0
	Integer    bool    // levels are whole numbers (users)
	Factor     float64 // the step-up multiplies the level by it (> 1)
	Resolution float64 // adjacent levels: this far apart (absolute), or
	Relative   float64 // this fraction of the level apart (if > 0); whole numbers at least 1
	Confidence float64 // of the interval: each end is misjudged with chance at most (1 - Confidence) / 2
	MaxRepeats int     // runs at a level being judged, at most (its first, choosing run excluded)
	MaxRuns    int     // runs over the whole search, at most
}

// Check says what is wrong with o, naming the option.
func (o Options) Check() error {
	switch {
	case !(o.Lo > 0) || math.IsInf(o.Lo, 0):
		return fmt.Errorf("lo must be > 0, got %s", num(o.Lo))
	case !(o.Hi >= o.Lo) || math.IsInf(o.Hi, 0):
		return fmt.Errorf("hi must be at least lo (%s), got %s", num(o.Lo), num(o.Hi))
	case o.Integer && (o.Lo != math.Trunc(o.Lo) || o.Hi != math.Trunc(o.Hi)):
		return fmt.Errorf("lo and hi must be whole numbers for whole levels, got %s and %s", num(o.Lo), num(o.Hi))
	case !(o.Factor > 1) || math.IsInf(o.Factor, 0):
		return fmt.Errorf("factor must be > 1, got %s", num(o.Factor))
	case o.Relative < 0 || o.Relative >= 1 || o.Resolution < 0 || math.IsInf(o.Resolution, 0) || (o.Relative == 0 && o.Resolution == 0 && !o.Integer):
		return fmt.Errorf("resolution must be > 0 (a number, or a percentage below 100 %%)")
	case !(o.Confidence >= 0.5 && o.Confidence < 1):
		return fmt.Errorf("confidence must be from 0.5 to below 1, got %s", num(o.Confidence))
	case o.MaxRepeats < 1 || o.MaxRepeats > 100:
		return fmt.Errorf("repeats must be from 1 to 100, got %d", o.MaxRepeats)
	case o.MaxRuns < 1:
		return fmt.Errorf("max_runs must be >= 1, got %d", o.MaxRuns)
	}
	if a := o.alpha(); newJudge(a, o.MaxRepeats).fewest() > o.MaxRepeats {
		return fmt.Errorf("repeats = %d cannot judge a level at confidence %s: each end needs %d runs one way (2^-n <= %s)",
			o.MaxRepeats, num(o.Confidence), leastRuns(a), num(a))
	}
	return nil
}

// alpha is the chance of misjudging each end: the interval's two ends
// share 1 - Confidence.
func (o Options) alpha() float64 { return (1 - o.Confidence) / 2 }

// leastRuns is the fewest unanimous runs whose chance under even odds is
// at most alpha.
func leastRuns(alpha float64) int {
	n := 1
	for math.Pow(0.5, float64(n)) > alpha {
		n++
	}
	return n
}

// Statuses of a result.
const (
	OK        = "ok"        // both ends judged: the interval holds the capacity
	Above     = "above"     // the SLO held at Hi: the capacity is Hi or more
	Below     = "below"     // the SLO broke at Lo: the capacity is under Lo
	Generator = "generator" // the load generator may have set the pace at the crossing: refused
	Invalid   = "invalid"   // a run at the crossing was invalid (its guards tripped): refused
	Budget    = "budget"    // MaxRuns ran out before an end was judged
)

// Point is one run of the search.
type Point struct {
	Level   float64
	Repeat  int
	Reading Reading
	Pass    bool   // every limit held
	Phase   string // "step", "bisect", "repeat"
}

// Level is what the runs at one level say.
type Level struct {
	Load   float64
	Runs   int
	Passes int
	Judged string    // "pass", "fail", "unsure", or "" (not judged: one run chose the way)
	Median []float64 // each limit's median figure over the runs
	Busy   int       // runs on a busy box
}

// Result is a finished search.
type Result struct {
	Points   []Point
	Levels   []Level // by load
	Status   string
	Reason   string  // for a status other than OK: what happened, in words
	Value    float64 // the highest load judged to meet the SLO; NaN when none is
	Low      float64 // the interval: the capacity is at least Low (NaN: under Lo)
	High     float64 // and at most High (+Inf: above Hi)
	Limiting string  // the limit that broke first (at the level judged failing); "" if none broke
	Alpha    float64 // the exact chance of misjudging one end at a level of even odds
	Warnings []string
}

// errStop ends a search when its run budget is spent.
var errStop = errors.New("search stopped")

type search struct {
	o       Options
	limits  []Limit
	measure Measure
	judge   judge
	levels  map[float64]*level
	res     Result
	runs    int
	prior   []string // warnings of the walk
}

type level struct {
	load     float64
	readings []Reading
	passes   []bool
	judged   string
	from     int // runs before it was chosen to be judged
}

// Search finds the capacity: the highest load at which measure's runs meet
// every limit. An error from measure ends it with that error.
func Search(o Options, limits []Limit, measure Measure) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if len(limits) == 0 {
		return nil, fmt.Errorf("slo: no limits")
	}
	s := &search{o: o, limits: limits, measure: measure, judge: newJudge(o.alpha(), o.MaxRepeats), levels: map[float64]*level{}}
	s.res.Alpha = s.judge.achieved
	p, f, err := s.walk()
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	s.report(p, f, err != nil)
	return &s.res, nil
}

// walk brackets the crossing and judges its ends until the level judged
// passing (p, or -Inf) and the level judged failing (f, or +Inf) hold
// between them only levels the repeats could not judge.
func (s *search) walk() (p, f float64, err error) {
	a, b := math.Inf(-1), math.Inf(1)
	for {
		if a, b, err = s.bracket(a, b); err != nil {
			return a, b, err
		}
		var moved bool
		if a, b, moved, err = s.confirmLow(a, b); err != nil || moved {
			if err != nil {
				return a, b, err
			}
			continue
		}
		if a, b, moved, err = s.confirmHigh(a, b); err != nil || moved {
			if err != nil {
				return a, b, err
			}
			continue
		}
		return a, b, nil
	}
}

// bracket finds a believed-passing a and believed-failing b that are
// adjacent: steps up while nothing is known to fail, tries Lo when nothing
// is known to pass, then bisects.
func (s *search) bracket(a, b float64) (float64, float64, error) {
	for math.IsInf(b, 1) && !(a >= s.o.Hi) {
		x := s.o.Lo
		if !math.IsInf(a, -1) {
			x = s.up(a)
		}
		pass, err := s.provisional(x, "step")
		if err != nil {
			return a, b, err
		}
		if pass {
			a = x
		} else {
			b = x
		}
	}
	if math.IsInf(a, -1) && !math.IsInf(b, 1) && b > s.o.Lo {
		pass, err := s.provisional(s.o.Lo, "step")
		if err != nil {
			return a, b, err
		}
		if pass {
			a = s.o.Lo
		} else {
			b = s.o.Lo
		}
	}
	for !math.IsInf(a, 0) && !math.IsInf(b, 0) && !s.adjacent(a, b) {
		m := s.mid(a, b)
		pass, err := s.provisional(m, "bisect")
		if err != nil {
			return a, b, err
		}
		if pass {
			a = m
		} else {
			b = m
		}
	}
	return a, b, nil
}

// confirmLow judges a, moving down past levels it cannot judge; a level
// judged failing becomes b, and the bracket moves (moved). The bracket's
// own end was chosen by its runs; a level stepped onto was not.
func (s *search) confirmLow(a, b float64) (float64, float64, bool, error) {
	for chosen := true; !math.IsInf(a, -1); chosen = false {
		j, err := s.confirm(a, chosen)
		if err != nil {
			return a, b, false, err
		}
		switch j {
		case "pass":
			return a, b, false, nil
		case "fail":
			return s.believedBelow(a), a, true, nil
		}
		a = s.below(a)
	}
	return a, b, false, nil
}

// confirmHigh judges b, moving up past levels it cannot judge; a level
// judged passing becomes a, and the bracket moves.
func (s *search) confirmHigh(a, b float64) (float64, float64, bool, error) {
	for chosen := true; !math.IsInf(b, 1); chosen = false {
		j, err := s.confirm(b, chosen)
		if err != nil {
			return a, b, false, err
		}
		switch j {
		case "fail":
			return a, b, false, nil
		case "pass":
			return b, s.believedAbove(b), true, nil
		}
		b = s.above(b)
	}
	return a, b, false, nil
}

// believedBelow is the highest level under x not judged failing whose runs
// mostly met the SLO, else -Inf.
func (s *search) believedBelow(x float64) float64 {
	best := math.Inf(-1)
	for load, l := range s.levels {
		if load < x && load > best && l.judged != "fail" && l.mostlyPass() {
			best = load
		}
	}
	return best
}

// believedAbove is the lowest level over x not judged passing whose runs
// mostly broke the SLO, else +Inf.
func (s *search) believedAbove(x float64) float64 {
	best := math.Inf(1)
	for load, l := range s.levels {
		if load > x && load < best && l.judged != "pass" && !l.mostlyPass() {
			best = load
		}
	}
	return best
}

// provisional is one run's word at x (the level's judgement, once it has
// one): whether it met the SLO.
func (s *search) provisional(x float64, phase string) (bool, error) {
	l := s.level(x)
	if len(l.readings) == 0 {
		if err := s.run(l, phase); err != nil {
			return false, err
		}
	}
	switch l.judged {
	case "pass":
		return true, nil
	case "fail":
		return false, nil
	}
	return l.mostlyPass(), nil
}

// confirm repeats x until the judge decides. When x's runs chose it (it
// is the bracket's end because they went that way), they are left out of
// the judgement: counted, they would lean it the way they chose.
func (s *search) confirm(x float64, chosen bool) (string, error) {
	l := s.level(x)
	if l.judged == "" && chosen {
		l.from = len(l.readings)
	}
	for l.judged == "" {
		n, k := l.fresh()
		if l.judged = s.judge.verdict(n, k); l.judged != "" {
			break
		}
		if err := s.run(l, "repeat"); err != nil {
			return "", err
		}
	}
	return l.judged, nil
}

// run measures l once more.
func (s *search) run(l *level, phase string) error {
	if s.runs >= s.o.MaxRuns {
		s.res.Status = Budget
		s.res.Reason = fmt.Sprintf("max_runs = %d ran out before both ends of the interval were judged", s.o.MaxRuns)
		return errStop
	}
	rep := len(l.readings)
	r, err := s.measure(l.load, rep)
	if err != nil {
		return err
	}
	if len(r.Values) != len(s.limits) {
		return fmt.Errorf("capacity: a reading of %d figures for %d limits", len(r.Values), len(s.limits))
	}
	s.runs++
	pass := r.Invalid == "" // an invalid run cannot be said to meet the SLO
	for i, lim := range s.limits {
		pass = pass && lim.Holds(r.Values[i])
	}
	l.readings = append(l.readings, r)
	l.passes = append(l.passes, pass)
	s.res.Points = append(s.res.Points, Point{Level: l.load, Repeat: rep, Reading: r, Pass: pass, Phase: phase})
	return nil
}

// refuse makes the result a refusal when a run at a level that sets the
// interval (its ends, and the levels between them) was generator-bound or
// invalid: the crossing would be the generator's, or rest on figures a
// guard disowned. Such runs elsewhere only warn: they set nothing the
// result says.
func (s *search) refuse(lo, hi float64) bool {
	r := &s.res
	elsewhere := map[float64]bool{}
	for _, p := range r.Points {
		bad := p.Reading.GenBound != "" || p.Reading.Invalid != ""
		switch {
		case !bad:
		case p.Level >= lo && p.Level <= hi && p.Reading.GenBound != "":
			r.Status = Generator
			r.Reason = fmt.Sprintf("at %s the load generator may have set the pace (%s): the crossing there would be the generator's, not the target's; add agents (workload.agents), give the generator more CPU, or give users more think",
				num(p.Level), p.Reading.GenBound)
			return true
		case p.Level >= lo && p.Level <= hi:
			r.Status = Invalid
			r.Reason = fmt.Sprintf("the run at %s is invalid (%s): its figures cannot say whether the SLO held there", num(p.Level), p.Reading.Invalid)
			return true
		default:
			elsewhere[p.Level] = true
		}
	}
	if len(elsewhere) > 0 {
		levels := slices.Sorted(maps.Keys(elsewhere))
		r.Warnings = append(r.Warnings, fmt.Sprintf("runs away from the crossing were generator-bound or invalid (at %s): they set neither end of the interval",
			strings.Join(nums(levels...), ", ")))
	}
	return false
}

func (s *search) level(x float64) *level {
	l := s.levels[x]
	if l == nil {
		l = &level{load: x}
		s.levels[x] = l
	}
	return l
}

// mostlyPass says whether more than half of l's runs met the SLO (a tie
// does not: the median run is no better than the limit's edge).
func (l *level) mostlyPass() bool {
	k := 0
	for _, p := range l.passes {
		if p {
			k++
		}
	}
	return 2*k > len(l.passes)
}

// fresh are the runs since l was chosen to be judged, and how many met the
// SLO.
func (l *level) fresh() (n, k int) {
	for _, p := range l.passes[l.from:] {
		n++
		if p {
			k++
		}
	}
	return n, k
}

// report fills the result from the ends the walk found; a search the
// budget stopped reports the ends judged so far.
func (s *search) report(p, f float64, stopped bool) {
	r := &s.res
	if stopped {
		p, f = s.judgedEnds()
	}
	r.Levels = s.levelTable()
	r.Value, r.Low, r.High = math.NaN(), math.NaN(), math.NaN()
	lo, hi := p, f
	if math.IsInf(lo, -1) {
		lo = s.o.Lo
	}
	if math.IsInf(hi, 1) {
		hi = s.o.Hi
	}
	if s.refuse(lo, hi) {
		return
	}
	if !math.IsInf(p, -1) {
		r.Low = p
	}
	r.High = math.Inf(1)
	if !math.IsInf(f, 1) {
		r.High = f
		if s.o.Integer {
			r.High = f - 1
		}
		r.Limiting = s.limiting(s.levels[f])
	}
	r.Value = s.value(p, f)
	switch {
	case stopped:
		if !math.IsInf(p, -1) && !math.IsInf(f, 1) {
			r.Status = OK
			r.Warnings = append(r.Warnings, r.Reason+": the interval spans the levels not yet judged")
			r.Reason = ""
		}
	case math.IsInf(p, -1):
		r.Status, r.Reason = Below, fmt.Sprintf("the SLO broke at lo = %s: the capacity is under the range searched; lower lo", num(s.o.Lo))
		if s.unsureAt(s.o.Lo) {
			r.Reason = fmt.Sprintf("the runs at lo = %s could not be judged either way: the capacity is at most %s; lower lo or allow more repeats", num(s.o.Lo), num(r.High))
		}
	case math.IsInf(f, 1):
		r.Status, r.Reason = Above, fmt.Sprintf("the SLO held at hi = %s: the capacity is %s or more; raise hi", num(s.o.Hi), num(r.Low))
		if s.unsureAt(s.o.Hi) {
			r.Reason = fmt.Sprintf("the runs at hi = %s could not be judged either way: the capacity is at least %s; raise hi or allow more repeats", num(s.o.Hi), num(r.Low))
		}
	default:
		r.Status = OK
	}
	r.Warnings = append(r.Warnings, s.busyWarnings(p, f)...)
}

// judgedEnds are the highest level judged passing and the lowest judged
// failing above it (-Inf and +Inf for none).
func (s *search) judgedEnds() (p, f float64) {
	p, f = math.Inf(-1), math.Inf(1)
	for load, l := range s.levels {
		if l.judged == "pass" && load > p {
			p = load
		}
	}
	for load, l := range s.levels {
		if l.judged == "fail" && load > p && load < f {
			f = load
		}
	}
	return p, f
}

func (s *search) unsureAt(x float64) bool { l := s.levels[x]; return l != nil && l.judged == "unsure" }

// value is the highest level in [p, f) whose runs mostly met the SLO.
func (s *search) value(p, f float64) float64 {
	if math.IsInf(p, -1) {
		return math.NaN()
	}
	v := p
	for load, l := range s.levels {
		if load > v && load < f && l.judged != "fail" && l.mostlyPass() {
			v = load
		}
	}
	return v
}

// limiting is the limit broken in most runs at the failing level; a tie
// goes to the one broken furthest (its median's excess over the limit).
func (s *search) limiting(l *level) string {
	if l == nil {
		return ""
	}
	best, bestN, bestEx := "", 0, 0.0
	for i, lim := range s.limits {
		var n int
		var xs []float64
		for _, r := range l.readings {
			if !lim.Holds(r.Values[i]) {
				n++
			}
			xs = append(xs, r.Values[i])
		}
		ex := lim.excess(stats.Median(xs))
		if n > bestN || (n == bestN && n > 0 && ex > bestEx) {
			best, bestN, bestEx = lim.Metric, n, ex
		}
	}
	return best
}

// busyWarnings say how many runs ran on a busy box, and whether the
// interval's ends rest on such runs.
func (s *search) busyWarnings(p, f float64) []string {
	busy, ends := 0, 0
	for _, pt := range s.res.Points {
		if pt.Reading.Busy {
			busy++
			if pt.Level == p || pt.Level == f {
				ends++
			}
		}
	}
	if busy == 0 {
		return nil
	}
	w := fmt.Sprintf("%d of %d runs ran on a busy box", busy, len(s.res.Points))
	if ends > 0 {
		w += fmt.Sprintf(", %d of them at the levels that set the interval (%s)", ends, strings.Join(nums(p, f), ", "))
	}
	return []string{w}
}

func (s *search) levelTable() []Level {
	var out []Level
	for _, l := range s.levels {
		lv := Level{Load: l.load, Runs: len(l.readings), Judged: l.judged}
		for _, p := range l.passes {
			if p {
				lv.Passes++
			}
		}
		for _, r := range l.readings {
			if r.Busy {
				lv.Busy++
			}
		}
		for i := range s.limits {
			var xs []float64
			for _, r := range l.readings {
				xs = append(xs, r.Values[i])
			}
			lv.Median = append(lv.Median, stats.Median(xs))
		}
		out = append(out, lv)
	}
	slices.SortFunc(out, func(a, b Level) int { return cmp.Compare(a.Load, b.Load) })
	return out
}

// num formats a load or a limit as a record shows it: 12, 0.001, 1250.
func num(x float64) string {
	if math.IsInf(x, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.6g", x)
}

func nums(xs ...float64) []string {
	var out []string
	for _, x := range xs {
		if !math.IsInf(x, 0) {
			out = append(out, num(x))
		}
	}
	return out
}
