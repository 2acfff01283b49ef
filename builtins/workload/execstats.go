package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchbook/benchbook/runtime/stats"
)

// outlierMADs is how far from the median, in scaled median absolute
// deviations, a run must lie to be called an outlier: hyperfine's rule
// (a modified z-score above 14.826 = 10 × 1.4826).
const outlierMADs = 10

// execSummaryRow is workload.exec's own columns, as hyperfine prints
// them: mean ± σ, min … max, user and system CPU; a process run has no
// req/s or per-request generator CPU.
func (r *Run) execSummaryRow() (head, row []string) {
	head = []string{"run", "runs", "mean ± σ", "min … max", "user", "sys", "max RSS", "errors"}
	w := r.d.WallMs
	if len(w) == 0 {
		return head, []string{r.d.Label, "0", "", "", "", "", "", r.errorText()}
	}
	mean, sd := meanSD(w)
	row = []string{r.d.Label, fmt.Sprint(len(w)),
		fmtMs(mean) + " ± " + fmtMs(sd),
		fmtMs(slices.Min(w)) + " … " + fmtMs(slices.Max(w)),
		fmtMs(meanOf(r.d.UserMs)), fmtMs(meanOf(r.d.SysMs)),
		fmt.Sprintf("%d KB", slices.Max(r.d.MaxRSSKb)), r.errorText()}
	return head, row
}

// spread is the run's "min" or "stddev" in ms: over the per-run wall times
// for exec (exact), over the latency histogram otherwise.
func (r *Run) spread(name string) float64 {
	if r.d.Kind == "exec" {
		if len(r.d.WallMs) == 0 {
			return math.NaN()
		}
		if name == "min" {
			return slices.Min(r.d.WallMs)
		}
		_, sd := meanSD(r.d.WallMs)
		return sd
	}
	if name == "min" {
		return usToMs(r.d.Hist.Min())
	}
	return r.d.Hist.StdDev() / 1000
}

func meanOf(xs []float64) float64 {
	m, _ := meanSD(xs)
	return m
}

// meanSD is the mean and the sample standard deviation (0 for one value).
func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// execWarnings says what hyperfine would: outliers far from the median
// (another process, a cold cache) and a first run much slower than the
// rest (warm up more).
func execWarnings(wall []float64) []string {
	if len(wall) < 3 {
		return nil
	}
	med := stats.Median(wall)
	dev := make([]float64, len(wall))
	for i, x := range wall {
		dev[i] = math.Abs(x - med)
	}
	mad := 1.4826 * stats.Median(dev)
	var out []string
	if mad > 0 {
		var idx []string
		for i, x := range wall {
			if math.Abs(x-med)/mad > outlierMADs {
				idx = append(idx, fmt.Sprintf("%d (%s)", i+1, fmtMs(x)))
			}
		}
		if len(idx) > 0 {
			out = append(out, fmt.Sprintf("statistical outliers: run %s more than %d MADs from the median %s; "+
				"another process or a cache may have interfered (a quieter box, or more warmup)",
				strings.Join(idx, ", "), outlierMADs, fmtMs(med)))
		}
	}
	if rest := wall[1:]; wall[0] > 2*stats.Median(rest) && wall[0]-stats.Median(rest) > 3*mad {
		out = append(out, fmt.Sprintf("the first run (%s) was much slower than the rest (median %s): "+
			"caches were cold; use warmup = 1 or more", fmtMs(wall[0]), fmtMs(stats.Median(rest))))
	}
	return out
}
