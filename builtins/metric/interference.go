package metric

import (
	"fmt"
	"math"
	goruntime "runtime"
	"strings"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/host"
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

// warning says how busy the box was, or "" when no run was busy and the
// arms ran under the same interference.
func (b box) warning(aLabel, bLabel string, cores int) string {
	limit := host.BusyCores(cores)
	all := append(append([]float64(nil), b.foreignA...), b.foreignB...)
	known, busy := 0, 0
	hi := 0.0
	for i, f := range all {
		if math.IsNaN(f) {
			continue
		}
		known++
		hi = math.Max(hi, f)
		if f >= limit || b.steal[i] >= host.BusyStealCores {
			busy++
		}
	}
	if known == 0 {
		return ""
	}
	ma, mb := nanMean(b.foreignA), nanMean(b.foreignB)
	differ := math.Abs(ma-mb) >= limit
	if busy == 0 && !differ {
		return ""
	}
	parts := []string{fmt.Sprintf("other processes used up to %.2f cores (of %d) during the runs, %.2f or more in %d of %d; on average %.2f during %s, %.2f during %s",
		hi, cores, limit, busy, known, ma, aLabel, mb, bLabel)}
	if l := nanMax(b.load1); !math.IsNaN(l) {
		parts = append(parts, fmt.Sprintf("load average up to %.1f", l))
	}
	if s := nanMax(b.steal); !math.IsNaN(s) && s > 0.005 {
		parts = append(parts, fmt.Sprintf("CPU steal up to %.2f cores", s))
	}
	s := "BUSY BOX: " + strings.Join(parts, "; ")
	if differ {
		s += fmt.Sprintf("; the arms ran under different interference (%s %.2f v %s %.2f cores), which can make a difference of its own",
			aLabel, ma, bLabel, mb)
	}
	return s
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
