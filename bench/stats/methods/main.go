// Command methods is the simulation issue 32's choice of a paired method
// rests on: four candidates for a paired comparison, side by side, under
// the conditions users measure in, with known truth.
//
//	go run ./bench/stats/methods > bench/stats/METHODS.md
//
// Candidates: the paired t on the log pair ratios; an exact sign-flip
// randomization test of their mean; the Wilcoxon signed-rank test with the
// Hodges-Lehmann estimate and its Walsh-average interval (what compare
// now does: stats.Compare); and the method before issue 32, an unpaired
// Mann-Whitney p beside a paired t-interval. Conditions: iid lognormal
// noise of 3 %, a drift of 1 and 2 % per pair shared by both runs of a
// pair, t(3) tails at the same sd, one B run ×1.3 (against the effect),
// values rounded to steps of 5. Seeded: the same binary prints the same
// table.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/benchbook/benchbook/builtins/metric/stats"
)

type condition struct {
	name    string
	drift   float64
	tails   bool
	outlier bool
	step    float64
}

var conditions = []condition{
	{name: "iid lognormal, 3 %"},
	{name: "drift 1 %/pair", drift: 0.01},
	{name: "drift 2 %/pair", drift: 0.02},
	{name: "t(3) tails", tails: true},
	{name: "one B run ×1.3", outlier: true},
	{name: "steps of 5", step: 5},
}

func (c condition) draw(rng *rand.Rand, n int, ratio float64) (a, b []float64) {
	noise := func() float64 {
		if !c.tails {
			return 0.03 * rng.NormFloat64()
		}
		var chi float64
		for range 3 {
			x := rng.NormFloat64()
			chi += x * x
		}
		return 0.03 * rng.NormFloat64() / math.Sqrt(chi/3) / math.Sqrt(3)
	}
	for i := range n {
		lvl := 100 * math.Pow(1+c.drift, float64(i))
		if c.step > 0 {
			lvl *= math.Exp(0.03 * rng.NormFloat64()) // the rounding grid's phase
		}
		a = append(a, lvl*math.Exp(noise()))
		b = append(b, ratio*lvl*math.Exp(noise()))
	}
	if c.outlier {
		b[rng.IntN(n)] *= 1.3
	}
	if c.step > 0 {
		for _, xs := range [][]float64{a, b} {
			for i, x := range xs {
				xs[i] = math.Max(c.step, math.Round(x/c.step)*c.step)
			}
		}
	}
	return a, b
}

// outcome is one method on one study: a verdict (B lower, B higher or
// none) and, when it makes one, an interval of B/A.
type outcome struct {
	lower, higher bool
	lo, hi        float64 // NaN when none
}

type method struct {
	name string
	run  func(a, b []float64) outcome
}

var methods = []method{
	{"before: unpaired Mann-Whitney p + paired t-interval", before},
	{"paired t on the log ratios", pairedT},
	{"sign-flip of the mean log ratio, exact", signFlip},
	{"Wilcoxon signed-rank + Hodges-Lehmann (compare now)", ours},
}

func logRatios(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range d {
		d[i] = math.Log(b[i]) - math.Log(a[i])
	}
	return d
}

func meanSD(d []float64) (float64, float64) {
	var m, s float64
	for _, x := range d {
		m += x
	}
	m /= float64(len(d))
	for _, x := range d {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(d)-1))
}

func tQuantile(df, q float64) float64 {
	dist := moremath.TDist{V: df}
	lo, hi := 0.0, 1.0
	for dist.CDF(hi) < q {
		lo, hi = hi, hi*2
	}
	for hi-lo > 1e-9*hi {
		if mid := (lo + hi) / 2; dist.CDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func pairedT(a, b []float64) outcome {
	d := logRatios(a, b)
	m, sd := meanSD(d)
	h := tQuantile(float64(len(d)-1), 0.975) * sd / math.Sqrt(float64(len(d)))
	lo, hi := math.Exp(m-h), math.Exp(m+h)
	return outcome{lower: hi < 1, higher: lo > 1, lo: lo, hi: hi}
}

func before(a, b []float64) outcome {
	o := pairedT(a, b)
	if stats.MannWhitney(a, b) > 0.05 {
		o.lower, o.higher = false, false
	}
	return o
}

// signFlip is the exact randomization test of the mean log ratio: every
// one of the 2^n sign patterns, in Gray-code order (one change a step).
func signFlip(a, b []float64) outcome {
	d := logRatios(a, b)
	var sum float64
	for _, x := range d {
		sum += x
	}
	obs, s := math.Abs(sum), sum
	flipped := make([]bool, len(d))
	count := 0
	for m := 0; m < 1<<len(d); m++ {
		if m > 0 {
			i := 0
			for (m>>i)&1 == 0 {
				i++
			}
			if flipped[i] {
				s += 2 * d[i]
			} else {
				s -= 2 * d[i]
			}
			flipped[i] = !flipped[i]
		}
		if math.Abs(s) >= obs-1e-12 {
			count++
		}
	}
	sig := float64(count)/float64(int(1)<<len(d)) <= 0.05
	return outcome{lower: sig && sum < 0, higher: sig && sum > 0, lo: math.NaN(), hi: math.NaN()}
}

func ours(a, b []float64) outcome {
	c, err := stats.Compare(a, b, stats.Options{Better: "lower"})
	if err != nil {
		panic(err)
	}
	return outcome{lower: c.Verdict == "IMPROVES", higher: c.Verdict == "WORSENS", lo: c.CI.Low, hi: c.CI.High}
}

func main() {
	trials := flag.Int("trials", 2000, "studies per cell")
	flag.Parse()
	ns := []int{4, 5, 6, 8, 10, 12, 16}
	w := os.Stdout
	fmt.Fprintf(w, "# Which paired method: a simulation\n\n")
	fmt.Fprintf(w, "Written by `go run ./bench/stats/methods > bench/stats/METHODS.md` (%d studies a cell, seeded). "+
		"B is 5 %% lower than A (better) in 3 %% noise for power and coverage; the arms are identical for the false-verdict rate. "+
		"A verdict is the method's own: IMPROVES / WORSENS or none.\n\n", *trials)
	for _, cd := range conditions {
		fmt.Fprintf(w, "## %s\n\n| method | power at %s pairs | false verdicts at %s pairs | coverage of the 95 %% interval at %s pairs |\n| --- | --- | --- | --- |\n",
			cd.name, join(ns), join(ns), join(ns))
		for _, m := range methods {
			var power, wrong, cover []string
			for _, n := range ns {
				p, f, c := cell(cd, m, n, *trials)
				power, wrong, cover = append(power, pct(p)), append(wrong, pct(f)), append(cover, pct(c))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", m.name, strings.Join(power, " "), strings.Join(wrong, " "), strings.Join(cover, " "))
		}
		fmt.Fprintln(w)
	}
}

// cell is one method at one size in one condition: power, false-verdict
// rate, coverage (NaN when it gives no interval).
func cell(cd condition, m method, n, trials int) (power, wrong, coverage float64) {
	rng := rand.New(rand.NewPCG(32, uint64(n)))
	found, false_, covered, intervals := 0, 0, 0, 0
	for range trials {
		a, b := cd.draw(rng, n, 0.95)
		o := m.run(a, b)
		if o.lower {
			found++
		}
		if !math.IsNaN(o.lo) && !math.IsNaN(o.hi) {
			intervals++
			if o.lo <= 0.95 && 0.95 <= o.hi {
				covered++
			}
		}
		a, b = cd.draw(rng, n, 1)
		if o := m.run(a, b); o.lower || o.higher {
			false_++
		}
	}
	coverage = math.NaN()
	if intervals > 0 {
		coverage = float64(covered) / float64(intervals)
	}
	return float64(found) / float64(trials), float64(false_) / float64(trials), coverage
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f", 100*x)
}

func join(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, "/")
}
