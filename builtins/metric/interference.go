package metric

import (
	"fmt"
	"math"
	goruntime "runtime"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/busybox"
	"github.com/benchbook/benchbook/builtins/internal/starval"
)

// The box during a comparison's runs (issue 32): every workload run
// records the CPU other processes used over its measurement window
// (foreign_cpu, cores), the load average over it (load1) and the CPU
// the hypervisor stole (steal_cpu, cores). A comparison whose runs were
// busy, or whose arms ran under different interference, says so in its
// verdict line, with the figures, as hyperfine warns of interference.

// box is those figures per run of each arm; NaN where a run has none.
type box struct {
	foreignA, foreignB []float64
	load1, steal       []float64 // every run, both arms
}

// boxOf reads the runs' interference figures.
func boxOf(runsA, runsB []starlark.Value, _ []starlark.Value) box {
	var b box
	read := func(runs []starlark.Value, foreign *[]float64) {
		for _, r := range runs {
			*foreign = append(*foreign, number(r, "foreign_cpu"))
			b.load1 = append(b.load1, number(r, "load1"))
			b.steal = append(b.steal, number(r, "steal_cpu"))
		}
	}
	read(runsA, &b.foreignA)
	read(runsB, &b.foreignB)
	return b
}

func number(v starlark.Value, name string) float64 {
	if _, ok := v.(starlark.HasAttrs); !ok {
		return math.NaN()
	}
	if f, ok := starval.Number(starval.Attr(v, name)); ok {
		return f
	}
	return math.NaN()
}

// boxVerdict is what a comparison says of the box: the line, and the
// counts the index's busy column shows.
type boxVerdict struct {
	text        string // "" when no run was busy and the arms ran alike
	busy, known int    // runs over the busy threshold, runs with figures
}

// warning says how busy the box was, in one line for all the runs ("BUSY
// BOX in 12 of 12 runs: other processes used 1.33-1.56 cores (of 2), load
// average 8.2-8.7; ..."), or "" when no run was busy and the arms ran
// under the same interference. The runs' own busy warnings are this line's
// parts, so a comparison does not repeat them one by one (issue 52).
func (b box) warning(aLabel, bLabel string, cores int) boxVerdict {
	limit := busybox.BusyCores(cores)
	all := append(append([]float64(nil), b.foreignA...), b.foreignB...)
	var v boxVerdict
	lo, hi := math.Inf(1), 0.0
	for i, f := range all {
		if math.IsNaN(f) {
			continue
		}
		v.known++
		lo, hi = math.Min(lo, f), math.Max(hi, f)
		if f >= limit || b.steal[i] >= busybox.BusyStealCores {
			v.busy++
		}
	}
	if v.known == 0 {
		return v
	}
	ma, mb := nanMean(b.foreignA), nanMean(b.foreignB)
	differ := math.Abs(ma-mb) >= limit
	if v.busy == 0 && !differ {
		return v
	}
	parts := []string{fmt.Sprintf("BUSY BOX in %d of %d runs: other processes used %s cores (of %d)", v.busy, v.known, span(lo, hi, 2), cores)}
	if l, h := nanMin(b.load1), nanMax(b.load1); !math.IsNaN(h) {
		parts[0] += ", load average " + span(l, h, 1)
	}
	parts = append(parts, fmt.Sprintf("on average %.2f cores during %s, %.2f during %s", ma, aLabel, mb, bLabel))
	if s := nanMax(b.steal); !math.IsNaN(s) && s > 0.005 {
		parts = append(parts, fmt.Sprintf("CPU steal up to %.2f cores", s))
	}
	if differ {
		parts = append(parts, fmt.Sprintf("the arms ran under different interference (%s %.2f v %s %.2f cores), which can make a difference of its own",
			aLabel, ma, bLabel, mb))
	}
	v.text = strings.Join(parts, "; ")
	return v
}

// span is "1.33-1.56", or "1.40" when both ends print alike.
func span(lo, hi float64, decimals int) string {
	a, b := strconv.FormatFloat(lo, 'f', decimals, 64), strconv.FormatFloat(hi, 'f', decimals, 64)
	if a == b {
		return a
	}
	return a + "-" + b
}

func nanMin(xs []float64) float64 {
	m := math.NaN()
	for _, x := range xs {
		if !math.IsNaN(x) && (math.IsNaN(m) || x < m) {
			m = x
		}
	}
	return m
}

func nanMean(xs []float64) float64 {
	var s float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

func nanMax(xs []float64) float64 {
	m := math.NaN()
	for _, x := range xs {
		if !math.IsNaN(x) && (math.IsNaN(m) || x > m) {
			m = x
		}
	}
	return m
}

// boxCores is the size of this box, for the busy threshold.
func boxCores() int { return goruntime.NumCPU() }
