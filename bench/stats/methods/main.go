// Command methods simulates the candidate statistical methods that issue 32
// chose among. It runs the candidates for a paired comparison, and for
// unequal arms, side by side, under the conditions users measure in, with
// known truth.
//
//	go run ./bench/stats/methods -out bench/stats/raw/methods-<time>    # simulate, keep the raw counts
//	go run ./bench/stats/methods -table bench/stats/raw/methods-<time>  # METHODS.md from those counts alone
//
// bench/stats/methods.sh does both. Paired candidates: the paired t on the
// log pair ratios; an exact sign-flip randomization test of their mean; a
// blocked model with an order term (the log ratio of each pair regressed
// on which arm ran second, as abab's rotated order AB BA AB ... allows:
// an ordinary least-squares t on the intercept); the Wilcoxon signed-rank
// test with the Hodges-Lehmann estimate and its Walsh-average interval
// (what compare does: stats.Compare); and the method before issue 32, an
// unpaired Mann-Whitney p beside a paired t-interval. Conditions: iid
// lognormal noise of 3 %, a drift of 1 and 2 % per pair shared by both runs
// of a pair, a drift of 2 % per pair that runs on within the pair (the
// second run of a pair half a pair's drift above the first, in rotated
// order), t(3) tails at the same sd, one B run ×1.3 (against the effect),
// values rounded to steps of 5. Unequal arms: compare's Moses interval with
// the exact Mann-Whitney test, and Welch's t on the logs. Seeded: the same
// binary writes the same counts.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/benchbook/benchbook/runtime/stats"
)

type condition struct {
	name    string
	drift   float64
	rotated bool // the drift runs on within each pair, in abab's rotated order
	tails   bool
	outlier bool
	step    float64
}

var conditions = []condition{
	{name: "iid lognormal, 3 %"},
	{name: "drift 1 %/pair", drift: 0.01},
	{name: "drift 2 %/pair", drift: 0.02},
	{name: "drift 2 %/pair, run by run (AB BA ...)", drift: 0.02, rotated: true},
	{name: "t(3) tails", tails: true},
	{name: "one B run ×1.3", outlier: true},
	{name: "steps of 5", step: 5},
}

// pairedNs are the numbers of pairs each paired cell is simulated at.
var pairedNs = []int{4, 5, 6, 8, 10, 12, 16}

func (c condition) noise(rng *rand.Rand) float64 {
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

// draw makes na A runs and nb B runs, pair i = run i of each, whose true
// ratio B/A is ratio. In rotated order pair i runs AB when i is even and
// BA when odd.
func (c condition) draw(rng *rand.Rand, na, nb int, ratio float64) (a, b []float64) {
	for i := range max(na, nb) {
		lvl := 100 * math.Pow(1+c.drift, float64(i))
		if c.step > 0 {
			lvl *= math.Exp(0.03 * rng.NormFloat64()) // the rounding grid's phase
		}
		lvlA, lvlB := lvl, lvl
		if c.rotated {
			if i%2 == 0 {
				lvlB *= math.Sqrt(1 + c.drift)
			} else {
				lvlA *= math.Sqrt(1 + c.drift)
			}
		}
		if i < na {
			a = append(a, lvlA*math.Exp(c.noise(rng)))
		}
		if i < nb {
			b = append(b, ratio*lvlB*math.Exp(c.noise(rng)))
		}
	}
	if c.outlier {
		b[rng.IntN(nb)] *= 1.3
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

var pairedMethods = []method{
	{"before: unpaired Mann-Whitney p + paired t-interval", before},
	{"paired t on the log ratios", pairedT},
	{"sign-flip of the mean log ratio, exact", signFlip},
	{"blocked model with an order term (t, n - 2 df)", blocked},
	{"Wilcoxon signed-rank + Hodges-Lehmann (compare now)", ours},
}

var unequalMethods = []method{
	{"Welch's t on the logs", welch},
	{"Mann-Whitney + Moses interval (compare now)", ours},
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

// tOutcome is the verdict and interval of a t-interval of a log ratio.
func tOutcome(est, se, df float64) outcome {
	h := tQuantile(df, 0.975) * se
	lo, hi := math.Exp(est-h), math.Exp(est+h)
	return outcome{lower: hi < 1, higher: lo > 1, lo: lo, hi: hi}
}

func pairedT(a, b []float64) outcome {
	d := logRatios(a, b)
	m, sd := meanSD(d)
	return tOutcome(m, sd/math.Sqrt(float64(len(d))), float64(len(d)-1))
}

// blocked fits d_i = τ + γ·s_i + ε_i by least squares, s_i = +1 when B ran
// second in pair i (AB, i even) and -1 when it ran first (BA): a pair is a
// block, so its level cancels, and γ takes a drift within the pair (or any
// effect of running second). τ is the effect, with a t-interval on n - 2
// degrees of freedom.
func blocked(a, b []float64) outcome {
	d := logRatios(a, b)
	n := float64(len(d))
	var ss, sd, sdd, s2 float64
	for i, x := range d {
		s := 1.0
		if i%2 == 1 {
			s = -1
		}
		ss += s
		s2 += s * s
		sd += x
		sdd += s * x
	}
	det := n*s2 - ss*ss
	if len(d) < 3 || det == 0 {
		return outcome{lo: math.NaN(), hi: math.NaN()}
	}
	tau := (s2*sd - ss*sdd) / det
	gamma := (n*sdd - ss*sd) / det
	var rss float64
	for i, x := range d {
		s := 1.0
		if i%2 == 1 {
			s = -1
		}
		r := x - tau - gamma*s
		rss += r * r
	}
	sigma2 := rss / (n - 2)
	return tOutcome(tau, math.Sqrt(sigma2*s2/det), n-2)
}

func before(a, b []float64) outcome {
	o := pairedT(a, b)
	if stats.MannWhitney(a, b) > 0.05 {
		o.lower, o.higher = false, false
	}
	return o
}

// welch is Welch's t-interval of the difference of the arms' mean logs,
// with the Welch-Satterthwaite degrees of freedom.
func welch(a, b []float64) outcome {
	la, lb := logs(a), logs(b)
	ma, sa := meanSD(la)
	mb, sb := meanSD(lb)
	va, vb := sa*sa/float64(len(la)), sb*sb/float64(len(lb))
	if va+vb == 0 {
		return outcome{lo: math.NaN(), hi: math.NaN()}
	}
	df := (va + vb) * (va + vb) / (va*va/float64(len(la)-1) + vb*vb/float64(len(lb)-1))
	return tOutcome(mb-ma, math.Sqrt(va+vb), df)
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
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

// unequalConditions and unequalSizes are the unequal-arm study: B 10 %
// lower for power and coverage, identical arms for false verdicts.
var (
	unequalConditions = []condition{
		{name: "iid lognormal, 3 %"},
		{name: "t(3) tails", tails: true},
		{name: "one B run ×1.3", outlier: true},
		{name: "steps of 2", step: 2},
		{name: "steps of 5", step: 5},
	}
	unequalSizes = [][2]int{{2, 5}, {2, 8}, {3, 4}, {3, 5}, {3, 7}, {4, 8}, {8, 16}}
)

const (
	pairedRatio  = 0.95
	unequalRatio = 0.90
)

func main() {
	out := flag.String("out", "", "simulate and write the raw counts to DIR/methods.csv")
	table := flag.String("table", "", "print METHODS.md from the counts in DIR/methods.csv")
	trials := flag.Int("trials", 2000, "studies per cell")
	flag.Parse()
	var err error
	switch {
	case *out != "":
		err = simulate(*out, *trials)
	case *table != "":
		err = writeTable(os.Stdout, *table)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "methods:", err)
		os.Exit(1)
	}
}

// counts is one method on one cell: studies, verdicts found on a real
// effect, false verdicts on identical arms, intervals made and covering.
type counts struct {
	section, condition, method string
	na, nb, trials             int
	found, wrong               int
	intervals, covered         int
}

var header = []string{"section", "condition", "method", "na", "nb", "trials", "found", "false", "intervals", "covered"}

func (c counts) record() []string {
	return []string{c.section, c.condition, c.method, strconv.Itoa(c.na), strconv.Itoa(c.nb), strconv.Itoa(c.trials),
		strconv.Itoa(c.found), strconv.Itoa(c.wrong), strconv.Itoa(c.intervals), strconv.Itoa(c.covered)}
}

func simulate(dir string, trials int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "methods.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	for _, cd := range conditions {
		for _, m := range pairedMethods {
			for _, n := range pairedNs {
				w.Write(cell("paired", cd, m, n, n, pairedRatio, trials).record())
			}
		}
		fmt.Fprintf(os.Stderr, "methods: %s done\n", cd.name)
	}
	for _, cd := range unequalConditions {
		for _, m := range unequalMethods {
			for _, sz := range unequalSizes {
				w.Write(cell("unequal", cd, m, sz[0], sz[1], unequalRatio, trials).record())
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cell is one method at one size in one condition. The seed depends on the
// size alone, so every method sees the same studies.
func cell(section string, cd condition, m method, na, nb int, ratio float64, trials int) counts {
	rng := rand.New(rand.NewPCG(32, uint64(na*100+nb)))
	c := counts{section: section, condition: cd.name, method: m.name, na: na, nb: nb, trials: trials}
	for range trials {
		a, b := cd.draw(rng, na, nb, ratio)
		o := m.run(a, b)
		if o.lower {
			c.found++
		}
		if !math.IsNaN(o.lo) && !math.IsNaN(o.hi) {
			c.intervals++
			if o.lo <= ratio && ratio <= o.hi {
				c.covered++
			}
		}
		a, b = cd.draw(rng, na, nb, 1)
		if o := m.run(a, b); o.lower || o.higher {
			c.wrong++
		}
	}
	return c
}

func readCounts(dir string) ([]counts, error) {
	f, err := os.Open(filepath.Join(dir, "methods.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != strings.Join(header, ",") {
		return nil, fmt.Errorf("%s: not a methods.csv (header %v)", dir, rows[0])
	}
	var out []counts
	for _, r := range rows[1:] {
		var n [7]int
		for i := range n {
			if n[i], err = strconv.Atoi(r[3+i]); err != nil {
				return nil, fmt.Errorf("%s: %v", dir, err)
			}
		}
		out = append(out, counts{section: r[0], condition: r[1], method: r[2], na: n[0], nb: n[1], trials: n[2],
			found: n[3], wrong: n[4], intervals: n[5], covered: n[6]})
	}
	return out, nil
}

// writeTable prints METHODS.md from the raw counts alone.
func writeTable(w io.Writer, dir string) error {
	all, err := readCounts(dir)
	if err != nil {
		return err
	}
	trials := 0
	if len(all) > 0 {
		trials = all[0].trials
	}
	fmt.Fprintf(w, "# Which method: a simulation\n\n")
	fmt.Fprintf(w, "Written by `bench/stats/methods.sh` from `%s/methods.csv` (%d studies a cell, seeded). "+
		"A verdict is the method's own: IMPROVES / WORSENS or none; power is B found lower, false verdicts either way "+
		"on identical arms, coverage the share of the intervals made that hold the true ratio (– when none is made).\n\n",
		filepath.ToSlash(dir), trials)
	fmt.Fprintf(w, "## Paired arms (B %.0f %% lower than A in 3 %% noise)\n\n", 100*(1-pairedRatio))
	for _, cd := range conditions {
		fmt.Fprintf(w, "### %s\n\n| method | power at %s pairs | false verdicts at %s pairs | coverage of the 95 %% interval at %s pairs |\n| --- | --- | --- | --- |\n",
			cd.name, join(pairedNs), join(pairedNs), join(pairedNs))
		for _, m := range pairedMethods {
			writeRow(w, m.name, pick(all, "paired", cd.name, m.name))
		}
		fmt.Fprintln(w)
	}
	sizes := make([]string, len(unequalSizes))
	for i, sz := range unequalSizes {
		sizes[i] = fmt.Sprintf("%d v %d", sz[0], sz[1])
	}
	fmt.Fprintf(w, "## Unequal arms (B %.0f %% lower than A in 3 %% noise; unpaired)\n\n", 100*(1-unequalRatio))
	for _, cd := range unequalConditions {
		fmt.Fprintf(w, "### %s\n\n| method | power at %s | false verdicts at %s | coverage of the 95 %% interval at %s |\n| --- | --- | --- | --- |\n",
			cd.name, strings.Join(sizes, " / "), strings.Join(sizes, " / "), strings.Join(sizes, " / "))
		for _, m := range unequalMethods {
			writeRow(w, m.name, pick(all, "unequal", cd.name, m.name))
		}
		fmt.Fprintln(w)
	}
	return nil
}

func pick(all []counts, section, condition, method string) []counts {
	var out []counts
	for _, c := range all {
		if c.section == section && c.condition == condition && c.method == method {
			out = append(out, c)
		}
	}
	return out
}

func writeRow(w io.Writer, name string, cells []counts) {
	var power, wrong, cover []string
	for _, c := range cells {
		power = append(power, pct(float64(c.found)/float64(c.trials)))
		wrong = append(wrong, pct(float64(c.wrong)/float64(c.trials)))
		cov := math.NaN()
		if c.intervals > 0 {
			cov = float64(c.covered) / float64(c.intervals)
		}
		cover = append(cover, pct(cov))
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, strings.Join(power, " "), strings.Join(wrong, " "), strings.Join(cover, " "))
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
