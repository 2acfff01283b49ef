// Command stats puts benchstat beside benchbook's compare on the same
// samples. Its 32 cases of paired runs, unequal arms, ties, outliers and no
// difference are written as Go benchmark files that benchstat reads and as
// the values stats.Compare gets.
//
//	go run ./bench/stats -out bench/stats/raw/<time>   # run both, keep every input and output
//	go run ./bench/stats -table bench/stats/raw/<time> # RESULTS.md's table from those files alone
//
// bench/stats/compare.sh does both. The samples are seeded: the same
// binary writes the same files.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/benchbook/benchbook/runtime/stats"
)

// sample is one case: its arms in ns/op (lower is better).
type sample struct {
	Name string    `json:"name"`
	What string    `json:"what"`
	A    []float64 `json:"a"`
	B    []float64 `json:"b"`
}

// ours is what stats.Compare said of a case.
type ours struct {
	Index    float64    `json:"index"`
	CI       [2]float64 `json:"ci"`
	CINone   string     `json:"ci_none,omitempty"`
	P        float64    `json:"p"`
	Verdict  string     `json:"verdict"`
	Accepted bool       `json:"accepted"`
	Test     string     `json:"test,omitempty"`
	Error    string     `json:"error,omitempty"`
}

func main() {
	out := flag.String("out", "", "run benchstat and compare on every case, keeping the files in this directory")
	table := flag.String("table", "", "print the side-by-side table from a directory -out wrote")
	flag.Parse()
	var err error
	switch {
	case *out != "":
		err = run(*out)
	case *table != "":
		err = writeTable(os.Stdout, *table)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stats:", err)
		os.Exit(1)
	}
}

// cases draws the samples: paired arms with a drift shared by each pair
// (sd 3 %), run noise of sd 3 % on the log scale, at 4 to 16 pairs and
// gains from 0 to 30 %, plus ties, outliers, unequal arms and the two
// cases issue 23 named.
func cases() []sample {
	rng := rand.New(rand.NewPCG(23, 2026))
	var out []sample
	add := func(name, what string, a, b []float64) {
		name = fmt.Sprintf("%02d_%s", len(out)+1, name) // the table keeps this order
		out = append(out, sample{Name: name, What: what, A: a, B: b})
	}
	for _, n := range []int{4, 6, 8, 16} {
		for _, gain := range []float64{0, 0.02, 0.05, 0.30} {
			a, b := paired(rng, n, n, 1-gain, 0.03, 0, false)
			add(fmt.Sprintf("n%d_gain%g", n, 100*gain), fmt.Sprintf("%d pairs, B %.0f %% faster", n, 100*gain), a, b)
		}
	}
	for _, n := range []int{4, 8, 16} {
		a, b := paired(rng, n, n, 0.95, 0.02, 0, true)
		add(fmt.Sprintf("ties_n%d", n), fmt.Sprintf("%d pairs, 5 %% faster, values rounded to 2 ns (ties)", n), a, b)
	}
	for _, n := range []int{6, 8, 16} {
		a, b := paired(rng, n, n, 0.95, 0.03, 0.1, false)
		add(fmt.Sprintf("outliers_n%d", n), fmt.Sprintf("%d pairs, 5 %% faster, 1 run in 10 slowed 30 %%", n), a, b)
	}
	for _, nn := range [][2]int{{3, 6}, {4, 8}, {2, 8}, {8, 16}} {
		a, b := paired(rng, nn[0], nn[1], 0.9, 0.03, 0, false)
		add(fmt.Sprintf("unequal_%dv%d", nn[0], nn[1]), fmt.Sprintf("%d vs %d runs, unpaired, 10 %% faster", nn[0], nn[1]), a, b)
	}
	a, b := paired(rng, 8, 8, 1, 0.02, 0, true)
	add("ties_same", "8 pairs, no difference, values rounded to 2 ns (ties)", a, b)
	a, b = paired(rng, 5, 10, 1, 0.03, 0, false)
	add("unequal_same", "5 vs 10 runs, unpaired, no difference", a, b)
	for _, n := range []int{2, 3} {
		a, b := paired(rng, n, n, 0.7, 0.02, 0, false)
		add(fmt.Sprintf("few_n%d", n), fmt.Sprintf("%d pairs, 30 %% faster", n), a, b)
	}
	add("issue23_index", "issue 23: one pair 10x, the index once outside its CI",
		[]float64{100, 100, 100, 100, 100, 100, 100, 1000}, []float64{105, 105, 105, 105, 105, 105, 105, 900})
	add("issue23_outlier", "issue 23: B above A in every pair, one by 3x (lower is better here)",
		[]float64{100, 100.5, 100.2, 100.1}, []float64{101.1, 101.5, 101.2, 300})
	return out
}

// paired draws na A runs and nb B runs (pair i shares its drift) whose true
// ratio B/A is ratio; outliers is the chance a run is slowed by 30 %.
func paired(rng *rand.Rand, na, nb int, ratio, sd, outliers float64, round bool) (a, b []float64) {
	value := func(centre float64) float64 {
		x := centre * math.Exp(sd*rng.NormFloat64())
		if rng.Float64() < outliers {
			x *= 1.3
		}
		if round {
			x = math.Round(x/2) * 2
		}
		return x
	}
	for i := range max(na, nb) {
		drift := math.Exp(0.03 * rng.NormFloat64())
		if i < na {
			a = append(a, value(100*drift))
		}
		if i < nb {
			b = append(b, value(ratio*100*drift))
		}
	}
	return a, b
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range cases() {
		caseDir := filepath.Join(dir, c.Name)
		if err := os.MkdirAll(caseDir, 0o755); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(caseDir, "case.json"), c); err != nil {
			return err
		}
		old, new := filepath.Join(caseDir, "A.txt"), filepath.Join(caseDir, "B.txt")
		if err := writeBench(old, c.A); err != nil {
			return err
		}
		if err := writeBench(new, c.B); err != nil {
			return err
		}
		cmd := exec.Command("go", "run", "golang.org/x/perf/cmd/benchstat", "-format", "csv", "A.txt", "B.txt")
		cmd.Dir = caseDir
		got, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("benchstat on %s: %w", c.Name, err)
		}
		if err := os.WriteFile(filepath.Join(caseDir, "benchstat.csv"), got, 0o644); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(caseDir, "benchbook.json"), compare(c)); err != nil {
			return err
		}
	}
	return nil
}

func compare(c sample) ours {
	r, err := stats.Compare(c.A, c.B, stats.Options{Metric: "ns/op", Better: "lower"})
	if err != nil {
		return ours{Error: err.Error()}
	}
	o := ours{Index: 100 * r.Ratio, CINone: r.CI.None, P: r.PValue, Verdict: r.Verdict, Accepted: r.Accepted, Test: r.Test}
	if r.CI.Ok() {
		o.CI = [2]float64{r.CI.Low, r.CI.High}
	}
	return o
}

// writeBench writes values as one benchmark's runs in Go's benchmark
// format, the input benchstat reads.
func writeBench(path string, xs []float64) error {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example\n")
	for _, x := range xs {
		fmt.Fprintf(&b, "BenchmarkCase 1 %g ns/op\n", x)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// writeTable reads every case directory and prints one row per case.
func writeTable(w io.Writer, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "| case | benchstat: B vs A (median) | benchstat p | benchbook: index (Hodges-Lehmann) | 95 % CI | p (benchbook's test) | verdict | seeds' rule |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		row, err := tableRow(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		fmt.Fprintln(w, row)
	}
	return nil
}

func tableRow(dir string) (string, error) {
	var c sample
	var o ours
	if err := readJSON(filepath.Join(dir, "case.json"), &c); err != nil {
		return "", err
	}
	if err := readJSON(filepath.Join(dir, "benchbook.json"), &o); err != nil {
		return "", err
	}
	delta, p, err := benchstatRow(filepath.Join(dir, "benchstat.csv"))
	if err != nil {
		return "", err
	}
	ci := "none"
	if o.CINone == "" {
		ci = fmt.Sprintf("%.1f–%.1f", 100*o.CI[0], 100*o.CI[1])
	}
	accepted := "not accepted"
	if o.Accepted {
		accepted = "accepted"
	}
	test := map[string]string{"Wilcoxon signed-rank": " (signed-rank)", "Mann-Whitney": " (MW)"}[o.Test]
	return fmt.Sprintf("| %s | %s | %s | %.1f | %s | %.3g%s | %s | %s |", c.What, delta, p, o.Index, ci, o.P, test, o.Verdict, accepted), nil
}

// benchstatRow reads the delta ("-4.93%" or "~") and the p ("p=0.029
// n=4") of the one benchmark in benchstat's CSV output.
func benchstatRow(path string) (delta, p string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return "", "", err
	}
	for _, row := range rows {
		if len(row) >= 7 && row[0] == "Case" {
			return row[5], strings.TrimSpace(row[6]), nil
		}
	}
	return "", "", fmt.Errorf("no Case row in %s", path)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
