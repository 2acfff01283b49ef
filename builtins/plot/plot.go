// Package plot is the notebook's `plot` module: charts of runs, comparisons
// and experiments. They are drawn with gonum.org/v1/plot from runs,
// comparisons, experiments and tables, as figure values that display as
// inline SVG in the record and are cached like any other value.
//
// Starlark API:
//
//	plot.bars(data, title = None) -> figure
//	    data: a comparison, a list of comparisons, or rows
//	    {"name", "before", "after"[, "better", "verdict"]}. Grouped bars of
//	    index values (before = 100, a dashed reference line), the direction
//	    ("higher is better") in the title, the verdict word over each bar.
//	plot.latency(runs, labels = None, title = None, log_y = False) -> figure
//	    percentile distribution of one or more runs or histograms on the
//	    1/(1-p) log axis (50%, 90%, 99%, 99.9%, ...), y in ms. runs (here
//	    and in series and hist) may be a dict of runs by name, such as a
//	    mix's run.by_tag or workload.concurrent's scenarios: one line each,
//	    named by its key.
//	plot.series(runs, metric = "rps", labels = None, title = None) -> figure
//	    per-window time series of a window attribute ("rps", "p50", "p99",
//	    "count", "errors") or of fn(window); long runs are downsampled.
//	plot.pairs(exp, metric = "rps", title = None) -> figure
//	    every run of an experiment as a point per pair and arm; metric is a
//	    run attribute, "pNN" (through run.p), or fn(run). A run that is not
//	    valid and has no value for it (a refused capacity) is a gap, named
//	    under the x axis.
//	plot.sweep(table, x, y, by = None, title = None, log_x = False, log_y = False, slo = None) -> figure
//	    one line per value of column `by` over column `x`; table is a table
//	    value or a list of dicts; slo = a number draws the SLO's limit on y
//	    as a dashed reference line.
//	plot.capacity(caps, metric = None, labels = None, title = None, log_x = False) -> figure
//	    capacity searches (a capacity, a list, or an experiment of them, a
//	    colour per arm): the SLO metric (the limit that broke first, or
//	    metric) against load on a log y axis, every run (a cross where it
//	    broke the SLO, ringed on a busy box), the levels' medians, the SLO
//	    line, and each crossing's interval shaded with the capacity dashed.
//	plot.hist(runs, labels = None, title = None, bins = 40) -> figure
//	    latency histogram(s) of runs, up to their p99.9.
//
// A figure has .title and .svg (the SVG text).
package plot

import (
	_ "embed"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Module is the `plot` module, and the decoder of the figures cells store.
func Module() runtime.Module {
	return runtime.Module{
		Name:     "plot",
		Globals:  starlark.StringDict{"plot": members},
		Decoders: codec.Types{"figure": decodeFigure},
		Docs:     docs,
	}
}

// docs is the module's reference (benchbook help plot).
//
//go:embed reference.md
var docs string

// members are plot's functions.
var members = &starlarkstruct.Module{
	Name: "plot",
	Members: starlark.StringDict{
		"bars":     starlark.NewBuiltin("plot.bars", bars),
		"latency":  starlark.NewBuiltin("plot.latency", latency),
		"series":   starlark.NewBuiltin("plot.series", series),
		"pairs":    starlark.NewBuiltin("plot.pairs", pairs),
		"sweep":    starlark.NewBuiltin("plot.sweep", sweep),
		"hist":     starlark.NewBuiltin("plot.hist", hist),
		"capacity": starlark.NewBuiltin("plot.capacity", capacityPlot),
	},
}
