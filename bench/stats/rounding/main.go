// Command rounding simulates, with known truth, what issue 47's review
// measured of compare and of the baseline gate: the paired interval and
// false verdicts on a grid coarse against the noise within a pair (item
// 8), and the gate's trips on reruns of one state with unpaired arms (item
// 10) and on a control arm that reacted to the box more than B (item 11).
//
//	go run ./bench/stats/rounding -out bench/stats/raw/rounding-<time>      # simulate, keep the raw counts
//	go run ./bench/stats/rounding -table bench/stats/raw/rounding-<time>    # the tables from those counts alone
//	go run ./bench/stats/rounding -table DIR -write bench/stats/RESULTS.md # ... into RESULTS.md's section
//
// bench/stats/rounding.sh does all of it. TRIALS studies a cell (default
// 2000). Seeded: the same binary writes the same counts.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/bench/internal/mdsection"
	"github.com/benchbook/benchbook/builtins/metric/gate"
	"github.com/benchbook/benchbook/runtime/stats"
)

// section is the name of this generator's section in RESULTS.md.
const section = "bench/stats/rounding"

func main() {
	out := flag.String("out", "", "simulate and write the raw counts to DIR")
	table := flag.String("table", "", "print the tables from the counts in DIR")
	write := flag.String("write", "", "with -table: replace this Markdown file's generated section instead of printing")
	trials := flag.Int("trials", 2000, "studies per cell")
	flag.Parse()
	var err error
	switch {
	case *out != "":
		err = simulate(*out, *trials)
	case *table != "":
		var body string
		if body, err = render(*table); err == nil {
			if *write == "" {
				fmt.Print(body)
			} else {
				err = mdsection.Replace(*write, section, body)
			}
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rounding:", err)
		os.Exit(1)
	}
}

// grid is a condition of item 8's kind: values rounded to a step at level
// 100, a level per pair shared by its two runs (lognormal) and noise per
// run; the is steps of 5, level sd 5 %, 1 % noise, where the two
// runs of a pair round together.
type grid struct {
	name        string
	step, level float64
	noise       float64
}

func (g grid) draw(rng *rand.Rand, n int, ratio float64) (a, b []float64) {
	round := func(x float64) float64 { return math.Max(g.step, math.Round(x/g.step)*g.step) }
	for range n {
		lvl := 100 * math.Exp(g.level*rng.NormFloat64())
		a = append(a, round(lvl*math.Exp(g.noise*rng.NormFloat64())))
		b = append(b, round(ratio*lvl*math.Exp(g.noise*rng.NormFloat64())))
	}
	return a, b
}

var grids = []grid{
	{name: "steps of 5, level sd 5 %, noise 1 % (the issue's)", step: 5, level: 0.05, noise: 0.01},
	{name: "steps of 5, level sd 3 %, noise 1 %", step: 5, level: 0.03, noise: 0.01},
	{name: "steps of 5, level sd 5 %, noise 2 %", step: 5, level: 0.05, noise: 0.02},
	{name: "steps of 5, level sd 3 %, noise 3 %", step: 5, level: 0.03, noise: 0.03},
	{name: "steps of 10, level sd 5 %, noise 1 %", step: 10, level: 0.05, noise: 0.01},
}

var gridPairs = []int{6, 7, 8, 10, 12, 16}

// fixedRatios are the true ratios of the sweep across the grid.
func fixedRatios() []float64 {
	var rs []float64
	for k := 0; k <= 16; k++ {
		rs = append(rs, 0.93+0.0025*float64(k))
	}
	return rs
}

// gridRow is one cell: a condition, a number of pairs, a truth (0: drawn
// across the grid; 1: identical arms, for false verdicts).
type gridRow struct {
	cond            string
	n               int
	truth           float64
	trials, covered int
	verdicts, wrong int // IMPROVES found (B lower), and a verdict on identical arms
	withoutInterval int
}

func simulateGrid(g grid, n int, truth float64, trials int, seed uint64) gridRow {
	rng := rand.New(rand.NewPCG(seed, uint64(n)<<20+uint64(math.Round(truth*1e5))))
	r := gridRow{cond: g.name, n: n, truth: truth, trials: trials}
	for range trials {
		ratio := truth
		if truth == 0 {
			ratio = 0.93 + 0.04*rng.Float64()
		}
		a, b := g.draw(rng, n, ratio)
		c, err := stats.Compare(a, b, stats.Options{Better: "lower"})
		if err != nil {
			panic(err)
		}
		switch {
		case !c.CI.Ok():
			r.withoutInterval++
		case c.CI.Low <= ratio && ratio <= c.CI.High:
			r.covered++
		}
		if ratio == 1 && c.Verdict != "~" {
			r.wrong++
		}
		if ratio != 1 && c.Verdict == "IMPROVES" {
			r.verdicts++
		}
	}
	return r
}

// session draws one record's runs of a comparison: na A and nb B runs
// whose true B/A is ratio, paired (a level per pair shared by its two runs)
// or not (a level per run), every run scaled by the box of the day (sd
// day) and by boxA or boxB, with 3 % noise per run.
func session(rng *rand.Rand, na, nb int, paired bool, ratio, day, boxA, boxB float64) gate.Figure {
	f := 100 * math.Exp(day*rng.NormFloat64())
	var a, b []float64
	for i := range max(na, nb) {
		lvl := math.Exp(0.02 * rng.NormFloat64())
		if i < na {
			a = append(a, boxA*f*lvl*math.Exp(0.03*rng.NormFloat64()))
		}
		if !paired {
			lvl = math.Exp(0.02 * rng.NormFloat64())
		}
		if i < nb {
			b = append(b, ratio*boxB*f*lvl*math.Exp(0.03*rng.NormFloat64()))
		}
	}
	return gate.Figure{Cell: "c", Name: "cpu", Metric: "db_cpu_us_per_req", Better: "lower", A: a, B: b, Paired: paired && na == nb}
}

// gateCase is one study of the gate: the baseline on the box of its day
// (sd day), this record on a box moved by move (1: drawn like the
// baseline's), A and B reacting to it by boxA and boxB, B's true change
// regression.
type gateCase struct {
	name            string
	na, nb          int
	paired          bool
	day, boxA, boxB float64
	regression      float64
}

var gateCases = []gateCase{
	{"paired, 6 pairs, the box of each day drawn (sd 10 %)", 6, 6, true, 0.1, 1, 1, 1},
	{"unpaired, 4 A v 8 B runs, the box of each day drawn (sd 10 %)", 4, 8, false, 0.1, 1, 1, 1},
	{"unpaired, 6 v 6 runs (paired = False), the box of each day drawn", 6, 6, false, 0.1, 1, 1, 1},
	{"unpaired, 3 A v 7 B runs, the box of each day drawn", 3, 7, false, 0.1, 1, 1, 1},
	{"unpaired, 6 v 6 runs, the box 10 % slower for both", 6, 6, false, 0, 1.1, 1.1, 1},
	{"unpaired, 5 A v 10 B runs, the box 10 % slower for both", 5, 10, false, 0, 1.1, 1.1, 1},
	{"paired, 6 pairs, the box 10 % slower for both", 6, 6, true, 0, 1.1, 1.1, 1},
	{"paired, 6 pairs: A +47 %, B's box unmoved, B 21 % worse", 6, 6, true, 0, 1.47, 1, 1.21},
	{"paired, 6 pairs: A +47 %, B's box +10 %, B 21 % worse", 6, 6, true, 0, 1.47, 1.1, 1.21},
	{"unpaired, 6 v 6 runs: A +47 %, B's box +10 %, B 21 % worse", 6, 6, false, 0, 1.47, 1.1, 1.21},
}

// gateRow counts one case: the gate's outcomes, its interval against the
// truth (B's true change), the gate on B's runs alone (as before issue 47
// for unpaired arms) and on B/A alone (as before for paired ones), and
// the same case with a true 20 % regression added.
type gateRow struct {
	name                                string
	trials, failed, undecided, ok       int
	apart, covered, bAloneFailed, oldOK int
	found20                             int
}

func simulateGate(c gateCase, trials int, seed uint64) gateRow {
	rng := rand.New(rand.NewPCG(seed, uint64(c.na*100+c.nb)))
	r := gateRow{name: c.name, trials: trials}
	bOnly := func(f gate.Figure) gate.Figure {
		return gate.Figure{Cell: f.Cell, Name: f.Name, Metric: f.Metric, Better: f.Better, B: f.B}
	}
	for range trials {
		then := session(rng, c.na, c.nb, c.paired, 0.8, c.day, 1, 1)
		now := session(rng, c.na, c.nb, c.paired, 0.8*c.regression, c.day, c.boxA, c.boxB)
		g := gate.Compare([]gate.Figure{now}, gate.ByID([]gate.Figure{then}), 5, stats.DefaultAlpha)[0]
		switch {
		case g.Failed:
			r.failed++
		case g.Undecided:
			r.undecided++
		default:
			r.ok++
		}
		if strings.Contains(g.Why, "the arms moved apart") {
			r.apart++
		}
		if truth := c.regression * c.boxB / c.boxA; g.Low <= truth && truth <= g.High {
			r.covered++
		}
		if gate.Compare([]gate.Figure{bOnly(now)}, gate.ByID([]gate.Figure{bOnly(then)}), 5, stats.DefaultAlpha)[0].Failed {
			r.bAloneFailed++
		}
		ratios := func(f gate.Figure) gate.Figure {
			o := bOnly(f)
			o.B = make([]float64, len(f.B))
			for i := range f.B {
				o.B[i] = f.B[i] / f.A[i]
			}
			return o
		}
		if c.paired {
			if o := gate.Compare([]gate.Figure{ratios(now)}, gate.ByID([]gate.Figure{ratios(then)}), 5, stats.DefaultAlpha)[0]; !o.Failed && !o.Undecided {
				r.oldOK++
			}
		} else {
			r.oldOK = -1 // unpaired arms were gated on B alone
		}
		worse := session(rng, c.na, c.nb, c.paired, 0.8*c.regression*1.2, c.day, c.boxA, c.boxB)
		if gate.Compare([]gate.Figure{worse}, gate.ByID([]gate.Figure{then}), 5, stats.DefaultAlpha)[0].Failed {
			r.found20++
		}
	}
	return r
}

func simulate(dir string, trials int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var gridRows [][]string
	for i, g := range grids {
		for _, n := range gridPairs {
			for _, truth := range append([]float64{0, 1}, fixedRatios()...) {
				r := simulateGrid(g, n, truth, trials, uint64(47+i))
				gridRows = append(gridRows, []string{r.cond, itoa(r.n), ftoa(r.truth), itoa(r.trials), itoa(r.covered),
					itoa(r.withoutInterval), itoa(r.verdicts), itoa(r.wrong)})
			}
		}
		fmt.Fprintf(os.Stderr, "rounding: %s done\n", g.name)
	}
	if err := writeCSV(filepath.Join(dir, "grid.csv"), gridHeader, gridRows); err != nil {
		return err
	}
	var gateRows [][]string
	for _, c := range gateCases {
		r := simulateGate(c, trials, 47)
		gateRows = append(gateRows, []string{r.name, itoa(r.trials), itoa(r.failed), itoa(r.undecided), itoa(r.ok), itoa(r.apart),
			itoa(r.covered), itoa(r.bAloneFailed), itoa(r.oldOK), itoa(r.found20)})
	}
	return writeCSV(filepath.Join(dir, "gate.csv"), gateHeader, gateRows)
}

var (
	gridHeader = []string{"condition", "pairs", "truth", "trials", "covered", "no_interval", "improves", "false"}
	gateHeader = []string{"case", "trials", "regression", "undecided", "ok", "apart", "covered", "b_alone_regression", "ba_alone_ok", "found_20"}
)

func itoa(n int) string     { return strconv.Itoa(n) }
func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func writeCSV(path string, header []string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readCSV(path string, header []string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != strings.Join(header, ",") {
		return nil, fmt.Errorf("%s: header %v, want %v", path, rows[0], header)
	}
	return rows[1:], nil
}
