// Package export is the notebook's `export` module: run data as files for a
// reviewer. A reviewer downloads them from the record or feeds them to other
// tools.
//
// Starlark API:
//
//	export.hgrm(run, ticks = 5, name = None) -> export
//	    the HdrHistogram percentile-distribution text (as wrk2 --latency
//	    and HistogramLogProcessor print it; values in ms), readable by
//	    HdrHistogram's plotter. run is a run or a histogram.
//	export.csv(data, windows = False, name = None) -> export
//	    one row per run (label, count, rps, mean and percentiles in ms, max,
//	    errors); windows = True gives one row per window of every run.
//	    data is a run, a list of runs, an experiment (arm and pair columns
//	    added), a table or a list of dicts.
//	export.json(value, indent = 2, name = None) -> export
//	    any value as JSON: dicts keep their order, host values give their
//	    JSON summary, non-finite floats become null.
//
// An export value (type "export") shows as a short preview with a download
// link in the record; str(x) and x.text are its whole text, x.name and
// x.mime describe it.
package export

import (
	_ "embed"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
)

// Module is the `export` module, and the decoder of the files cells store.
func Module() runtime.Module {
	return runtime.Module{
		Name:     "export",
		Globals:  starlark.StringDict{"export": members},
		Decoders: codec.Types{"export": decodeFile},
		Docs:     docs,
	}
}

// docs is the module's reference (benchbook help export).
//
//go:embed reference.md
var docs string

// members are export.hgrm, export.csv and export.json.
var members = &starlarkstruct.Module{
	Name: "export",
	Members: starlark.StringDict{
		"hgrm": starlark.NewBuiltin("export.hgrm", hgrmBuiltin),
		"csv":  starlark.NewBuiltin("export.csv", csvBuiltin),
		"json": starlark.NewBuiltin("export.json", jsonBuiltin),
	},
}
