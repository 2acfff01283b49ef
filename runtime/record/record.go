// Package record renders an executed notebook as a reviewable document. It
// writes one self-contained HTML file, Markdown with SVG files, or JSON for
// tools.
//
// The engine fills a Record; this package only presents it. Values inside
// outputs are Starlark values; a value presents itself through the optional
// interfaces below, and anything else is shown by its String().
package record

import (
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/runtime/starjson"
)

// Record is everything known about one notebook's latest state.
type Record struct {
	Title    string    // from the notebook's first Markdown heading, else the file name
	Path     string    // notebook path as given on the command line
	Rendered time.Time // when this record was made
	Cells    []Cell
	Verdict  starlark.Value // the notebook's verdict(...) value if any, else nil
	Prov     Provenance
	Warnings []string // record-level problems (a damaged cache entry, ...)
	// Named are values cells bound to global names that tools read back from
	// a JSON record: run -baseline gates every named comparison, shown or not.
	Named []Named
}

// Named is a value a cell bound to a global name.
type Named struct {
	Cell, Name string
	Value      starlark.Value
}

// Status is what happened to a cell, the one list of statuses: the engine's
// runtime.Status is this type, and records, summaries and the CLI name them
// from here.
type Status string

// The statuses of a cell.
const (
	StatusHit     Status = "hit"     // values and outputs from the cache
	StatusRan     Status = "ran"     // executed in this run
	StatusLive    Status = "live"    // values cannot be stored; re-executed when needed
	StatusError   Status = "error"   // failed (or was interrupted)
	StatusSkipped Status = "skipped" // an upstream cell failed
	StatusNever   Status = "never"   // not computed for its current source (render only)
	StatusStale   Status = "stale"   // would run (planning only)
)

// Statuses are the statuses a finished run or render gives, in the order
// summaries count them ("5 cells: 2 ran, 3 hit").
var Statuses = []Status{StatusRan, StatusHit, StatusLive, StatusError, StatusSkipped, StatusNever}

// Cell is one cell of the notebook, in file order.
type Cell struct {
	Name     string // "setup", or a stable id such as "cell3"
	Markdown bool   // a [markdown] cell: Source is its Markdown text
	Source   string // code as written (comments kept), or Markdown text
	Line     int    // first line of the cell body in the notebook
	Status   Status
	Why      string // short reason for the status: "source changed", "upstream runs failed", ...
	Reads    []string
	Defines  []string

	Duration   time.Duration // execution time when computed
	ComputedAt time.Time     // zero when never computed
	Host       string        // host that computed it (a cached entry may come from elsewhere)
	Load1      float64       // load average when it started

	Outputs  []starlark.Value // in order: printed text (a Printed value), md, tables, figures, the displayed last expression
	Error    string           // "file:line:col: message" for errors
	Trace    string           // Starlark backtrace
	Warnings []string
	Inputs   []Input
}

// Input is a dynamic input of a cell, with the hash it had.
type Input struct{ Kind, Name, Hash string }

// Provenance says where and how the record was made.
type Provenance struct {
	Host        Host
	GoVersion   string
	Version     string // benchbook version
	GitRev      string // the notebook's repository, "" when not in git
	GitDirty    bool
	Params      map[string]string
	CommandLine string
}

// Host describes a machine.
type Host struct {
	Name     string
	CPU      string
	Cores    int
	MemBytes uint64
	Kernel   string
	Load     [3]float64
}

// Optional interfaces through which values present themselves. Values
// implement the ones that make sense for them; the renderer falls back to
// String() in a <pre> block.
type (
	// HTMLer returns an HTML fragment. The value is responsible for escaping
	// everything it took from the notebook or from measured data.
	HTMLer interface{ HTML() string }
	// Markdowner returns GitHub-flavoured Markdown (text bars, tables).
	Markdowner interface{ Markdown() string }
	// SVGer is a figure: an SVG document, inlined in HTML and written as a
	// file beside the Markdown record.
	SVGer interface{ SVG() []byte }
	// JSONer returns a JSON-friendly summary for --format json.
	JSONer = starjson.JSONer
	// MarkdownDetailer is a Markdowner with more to say one click away
	// (a verdict's runs and method): the Markdown record puts the body
	// after its Markdown in a <details> block under summary, as the HTML
	// value does in its own.
	MarkdownDetailer interface {
		MarkdownDetail() (summary, body string)
	}
)

// FigureSet is a value with figures beside its own HTML or Markdown (a
// profile's flame graphs): the HTML record inlines each after the value,
// in a <figure> with its caption; the Markdown record writes each as an
// SVG file beside it and links it. Each SVG is checked as SVGer's is.
type FigureSet interface{ Figures() []Figure }

// Figure is one figure of a FigureSet.
type Figure struct {
	Name    string // names its file in the Markdown record: "<cell>-<n>-<name>.svg"
	Caption string
	SVG     []byte
}

// Downloader is a value that offers its data as files (CSV, .hgrm, JSON).
// The HTML record embeds them as data: links, so a reviewer can save a
// run's raw data with no server.
type Downloader interface{ Downloads() []Download }

// Download is one file offered by a Downloader.
type Download struct {
	Name string // file name offered to the browser, "run-a.csv"
	MIME string // "text/csv", "application/json", ...
	Data []byte
}
