package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// render is the section of RESULTS.md, from the raw counts in dir alone.
func render(dir string) (string, error) {
	gridRows, err := readCSV(filepath.Join(dir, "grid.csv"), gridHeader)
	if err != nil {
		return "", err
	}
	gateRows, err := readCSV(filepath.Join(dir, "gate.csv"), gateHeader)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From `%s` (%s studies a cell, seeded).\n\n", filepath.ToSlash(dir), gridRows[0][3])
	writeGrid(&b, gridRows)
	writeGate(&b, gateRows)
	return b.String(), nil
}

type count struct{ k, n int }

func (c count) pct() string {
	if c.n == 0 || c.k < 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", 100*float64(c.k)/float64(c.n))
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// writeGrid is item 8's table: per condition and number of pairs, the
// coverage with the truth drawn across the grid, at 0.937, the least and
// most over the fixed sweep, and false verdicts on identical arms.
func writeGrid(b *strings.Builder, rows [][]string) {
	b.WriteString("### Paired intervals on a coarse grid (items 6-8)\n\n")
	b.WriteString("Coverage of compare's 95 % interval (%) and false verdicts on identical arms (%): the true B/A drawn anew for every " +
		"study from 0.93 to 0.97 (\"across\"), fixed at 0.9375, and the least and most over fixed ratios from 0.930 to 0.970 by 0.0025. " +
		"The goal: false ≤ 5 %, coverage 93–97.5 %. A fixed ratio on a ratio of grid values (95/100) is covered nearly always at few pairs: " +
		"every pair then reads that ratio, as it does for ratios a little off it.\n\n")
	b.WriteString("| condition | pairs | across | at 0.9375 | fixed: least – most | false verdicts |\n| --- | --- | --- | --- | --- | --- |\n")
	type key struct {
		cond string
		n    int
	}
	var order []key
	across, at, wrong := map[key]count{}, map[key]count{}, map[key]count{}
	lo, hi := map[key]float64{}, map[key]float64{}
	for _, r := range rows {
		k := key{r[0], atoi(r[1])}
		truth, _ := strconv.ParseFloat(r[2], 64)
		trials, covered := atoi(r[3]), atoi(r[4])
		if _, seen := lo[k]; !seen {
			order = append(order, k)
			lo[k], hi[k] = 2, -1
		}
		switch {
		case truth == 0:
			across[k] = count{covered, trials}
		case truth == 1:
			wrong[k] = count{atoi(r[7]), trials}
		default:
			c := float64(covered) / float64(trials)
			lo[k], hi[k] = math.Min(lo[k], c), math.Max(hi[k], c)
			if math.Abs(truth-0.9375) < 1e-9 {
				at[k] = count{covered, trials}
			}
		}
	}
	for _, k := range order {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %.1f – %.1f | %s |\n", k.cond, k.n, across[k].pct(), at[k].pct(), 100*lo[k], 100*hi[k], wrong[k].pct())
	}
	b.WriteString("\n")
}

// writeGate is items 10 and 11's table.
func writeGate(b *strings.Builder, rows [][]string) {
	b.WriteString("### The baseline gate (items 10-11)\n\n")
	b.WriteString("Each study gates a record against a baseline with `-max-regression 5` (CPU per request, lower is better; 3 % noise " +
		"per run, a level per pair or run of sd 2 %). Outcomes in %: REGRESSION, undecided, ok, and undecided because the arms moved " +
		"apart; what `-fail-undecided` fails (REGRESSION or undecided); whether the interval held the true change of B/A (%); the gate " +
		"on B's runs alone (how unpaired arms were gated before issue 47: REGRESSION) and on B/A alone (how paired ones were: ok, " +
		"– for unpaired arms); and how often a true 20 % regression more trips it. The goal: REGRESSION ≤ 1 % on reruns of one state " +
		"(the rows without \"worse\"); a real regression hidden by a control arm that moved (the rows with A +47 %) is not ok.\n\n")
	b.WriteString("| case | REGRESSION | undecided | ok | arms apart | -fail-undecided fails | interval holds the truth | before: on B alone, REGRESSION | before: on B/A alone, ok | 20 % more: REGRESSION |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		n := atoi(r[1])
		c := func(i int) string { return count{atoi(r[i]), n}.pct() }
		fails := count{atoi(r[2]) + atoi(r[3]), n}.pct()
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r[0], c(2), c(3), c(4), c(5), fails, c(6), c(7), c(8), c(9))
	}
	b.WriteString("\n")
}
