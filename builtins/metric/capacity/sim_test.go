package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benchbook/benchbook/runtime/testsupport/timing"
)

// A simulated system with known truth: at load x a run's SLO figure is
// the model's median figure f(x) times lognormal noise (median 1), so the
// truth, the highest load whose runs meet the limit more often than not,
// is the highest load with f(x) <= limit, computed from f alone.
type model struct {
	name    string
	f       func(x float64) float64
	limit   float64
	sigma   float64
	opts    Options
	integer bool
}

// truth is the capacity: for whole numbers the highest x in [Lo, Hi] with
// f(x) <= limit (Lo - 1 when none, Hi when all); for a continuous load the
// x where f crosses the limit.
func (m model) truth() float64 {
	if m.integer {
		c := m.opts.Lo - 1
		for x := m.opts.Lo; x <= m.opts.Hi; x++ {
			if m.f(x) <= m.limit {
				c = x
			}
		}
		return c
	}
	lo, hi := m.opts.Lo, m.opts.Hi
	for range 200 {
		mid := (lo + hi) / 2
		if m.f(mid) <= m.limit {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// search runs one search of m with its own noise.
func (m model) search(t testing.TB, rng *rand.Rand) *Result {
	measure := func(x float64, _ int) (Reading, error) {
		return Reading{Values: []float64{m.f(x) * math.Exp(m.sigma*rng.NormFloat64())}}, nil
	}
	res, err := Search(m.opts, []Limit{{Metric: "p99", Value: m.limit, Max: true}}, measure)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// covers says whether the interval holds the truth.
func covers(res *Result, truth float64) bool {
	return res.Status == OK && res.Low <= truth && truth <= res.High
}

func users(lo, hi float64) Options {
	return Options{Lo: lo, Hi: hi, Integer: true, Factor: 2, Relative: 0.02, Confidence: 0.95, MaxRepeats: 10, MaxRuns: 200}
}

// models are the simulated systems, each with its crossing drawn anew per
// search (u in [0, 1)), so the truth falls anywhere between two levels.
func models(u float64) []model {
	c := 10 + 40*u // the crossing, 10..50 users
	return []model{
		// Zero think time: latency N·S/c past the knee, S/c per user.
		{name: "users, linear, noise 5 %", f: func(x float64) float64 { return 2.5 * max(x, 4) }, limit: 2.5 * c, sigma: 0.05, opts: users(1, 128), integer: true},
		{name: "users, linear, noise 20 %", f: func(x float64) float64 { return 2.5 * max(x, 4) }, limit: 2.5 * c, sigma: 0.2, opts: users(1, 128), integer: true},
		// A hockey stick: flat, then latency climbs fast.
		{name: "users, hockey stick, noise 10 %", f: func(x float64) float64 { return 20 + math.Pow(max(0, x-c+3), 2) }, limit: 29, sigma: 0.1, opts: users(2, 200), integer: true},
		// The crossing at even odds: the levels on either side meet the
		// limit in nearly half their runs (0.1 % off it, 10 % noise).
		{name: "users, even odds at the crossing", f: func(x float64) float64 {
			k := math.Floor(c)
			return 100 * (1 + 0.001*math.Copysign(1, x-k-0.5) + 0.05*(x-k-0.5))
		}, limit: 100, sigma: 0.1, opts: users(1, 128), integer: true},
		// An open loop's rate: latency blows up near the target's
		// throughput (M/M/1-like), continuous levels at 2 %.
		{name: "rate, M/M/1-like, noise 10 %", f: func(x float64) float64 {
			mu := 800 + 1600*u
			if x >= mu {
				return math.Inf(1)
			}
			return 1 + 10/(1-x/mu)
		}, limit: 60, sigma: 0.1,
			opts: Options{Lo: 50, Hi: 5000, Factor: 2, Relative: 0.02, Confidence: 0.95, MaxRepeats: 10, MaxRuns: 200}},
	}
}

// TestSearchCoversTheTruth: in 2,000 searches per model, each with its
// crossing drawn anew, the interval holds the true capacity in at least
// 95 % of them (the stated confidence), and it is narrower than the
// spacing of a plain sweep of the range by factor 2 (the seeds' sweeps)
// in 90 % of them. A plain sweep of as many runs as the search made,
// spread evenly, is logged beside it: how often its crossing held the
// truth.
func TestSearchCoversTheTruth(t *testing.T) {
	timing.Only(t, "a simulation of 10,000 searches")
	const searches = 2000
	for i := range models(0) {
		name := models(0)[i].name
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(49, uint64(i)))
			var covered, runs, narrower, sweepCovered int
			var widths []float64
			for range searches {
				m := models(rng.Float64())[i]
				res := m.search(t, rng)
				truth := m.truth()
				if covers(res, truth) {
					covered++
				}
				runs += len(res.Points)
				width := res.High - res.Low
				if m.integer {
					width++
				}
				widths = append(widths, width)
				if width < geoSpacing(m.opts, truth) {
					narrower++
				}
				if plainSweepCovers(m, truth, len(res.Points), rng) {
					sweepCovered++
				}
			}
			slices.Sort(widths)
			cover := float64(covered) / searches
			t.Logf("%s: covered %d of %d (%.1f %%), %.1f runs a search, interval width median %g (90th %g), narrower than the doubling sweep's spacing in %.1f %%; a plain even sweep of as many runs covered %.1f %%",
				name, covered, searches, 100*cover, float64(runs)/searches, widths[searches/2], widths[searches*9/10], 100*float64(narrower)/searches,
				100*float64(sweepCovered)/searches)
			if cover < 0.95 {
				t.Errorf("the interval held the truth in %.1f %% of the searches, under the stated 95 %%", 100*cover)
			}
			if float64(narrower)/searches < 0.9 {
				t.Errorf("narrower than the doubling sweep's spacing in only %.1f %% of the searches", 100*float64(narrower)/searches)
			}
		})
	}
}

// geoSpacing is the spacing at the truth of a plain sweep of the range by
// factor 2 from Lo (the levels the step-up measures: Lo, 2 Lo, 4 Lo, ...).
func geoSpacing(o Options, truth float64) float64 {
	for x := o.Lo; x <= o.Hi; x *= 2 {
		if x <= truth && truth < 2*x {
			return x
		}
	}
	return o.Hi - o.Lo
}

// plainSweepCovers runs a plain sweep of n levels spread evenly over the
// range, one run each, as a notebook without capacity would, and says
// whether its crossing (the level before the first that broke the limit,
// up to that one) holds the truth.
func plainSweepCovers(m model, truth float64, n int, rng *rand.Rand) bool {
	o := m.opts
	prev := math.Inf(-1)
	for i := range max(n, 2) {
		x := o.Lo + (o.Hi-o.Lo)*float64(i)/float64(max(n, 2)-1)
		if m.integer {
			x = math.Round(x)
		}
		if x == prev {
			continue
		}
		if m.f(x)*math.Exp(m.sigma*rng.NormFloat64()) > m.limit {
			hi := x
			if m.integer {
				hi = x - 1
			}
			return prev <= truth && truth <= hi
		}
		prev = x
	}
	return truth >= prev
}
