package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/internal/fmtnum"
	"github.com/benchbook/benchbook/builtins/internal/metricname"
	"github.com/benchbook/benchbook/builtins/internal/starval"
)

func csvBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var data starlark.Value
	var windows bool
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &data, "windows?", &windows, "name?", &name); err != nil {
		return nil, err
	}
	t, base, err := tableOf(th, data, windows)
	if err != nil {
		return nil, fmt.Errorf("%s: data: %w", b.Name(), err)
	}
	return &File{Name: fileName(name, base, ".csv"), MIME: "text/csv", Text: t.csv()}, nil
}

// grid is a header and rows of cells, already formatted.
type grid struct {
	header []string
	rows   [][]string
}

func (g grid) csv() string {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(g.header)
	_ = w.WriteAll(g.rows)
	return buf.String()
}

// tableOf turns what export.csv accepts into a grid and a file name.
func tableOf(th *starlark.Thread, data starlark.Value, windows bool) (grid, string, error) {
	if runs, ok := starval.Attr(data, "runs").(starlark.IterableMapping); ok {
		rs, err := experimentRuns(data, runs)
		if err != nil {
			return grid{}, "", err
		}
		return runsGrid(th, rs, windows, "experiment")
	}
	if isRun(data) {
		return runsGrid(th, []taggedRun{{run: data}}, windows, labelOf(data, "run"))
	}
	rows, err := rowsOf(data)
	if err != nil {
		return grid{}, "", err
	}
	if len(rows) > 0 && isRun(rows[0]) {
		rs := make([]taggedRun, len(rows))
		for i, r := range rows {
			rs[i] = taggedRun{run: r}
		}
		return runsGrid(th, rs, windows, "runs")
	}
	if windows {
		return grid{}, "", fmt.Errorf("windows = True needs runs, got rows of %s", typeOfRows(rows))
	}
	g, err := dictGrid(data, rows)
	return g, "table", err
}

func typeOfRows(rows []starlark.Value) string {
	if len(rows) == 0 {
		return "nothing"
	}
	return rows[0].Type()
}

// isRun says whether v looks like a run: latency data and windows, or a
// run's attributes.
func isRun(v starlark.Value) bool {
	if _, ok := v.(starlark.Mapping); ok {
		return false
	}
	_, hdr := v.(hdrer)
	return hdr || starval.Attr(v, "windows") != nil && starval.Attr(v, "rps") != nil
}

// taggedRun is a run with its place in an experiment ("" outside one).
type taggedRun struct {
	arm  string
	pair int
	run  starlark.Value
}

// experimentRuns lists the runs of exp in arm order (exp.arms if given),
// pair by pair.
func experimentRuns(exp starlark.Value, runs starlark.IterableMapping) ([]taggedRun, error) {
	var arms []starlark.Value
	if a := starval.Attr(exp, "arms"); a != nil {
		arms = itemsOf(a)
	} else {
		for _, kv := range runs.Items() {
			arms = append(arms, kv[0])
		}
	}
	var out []taggedRun
	for _, a := range arms {
		rs, found, _ := runs.Get(a)
		if !found {
			return nil, fmt.Errorf("arm %s has no runs", a)
		}
		for j, r := range itemsOf(rs) {
			out = append(out, taggedRun{arm: textOf(a), pair: j + 1, run: r})
		}
	}
	return out, nil
}

// runColumns are the per-run columns, in ms where they are latencies: the
// summary quantiles between mean and max.
var runColumns = append(append([]string{"label", "count", "rps", "mean_ms"}, quantileColumns()...), "max_ms", "errors")

func quantileColumns() []string {
	var cols []string
	for _, q := range metricname.SummaryQuantiles {
		cols = append(cols, metricname.QuantileKey(q)+"_ms")
	}
	return cols
}

func runsGrid(th *starlark.Thread, rs []taggedRun, windows bool, base string) (grid, string, error) {
	tagged := rs[0].arm != ""
	if windows {
		g, err := windowsGrid(rs, tagged)
		return g, base + "-windows", err
	}
	var g grid
	if tagged {
		g.header = append(g.header, "arm", "pair")
	}
	g.header = append(g.header, runColumns...)
	for _, r := range rs {
		var row []string
		if tagged {
			row = append(row, r.arm, strconv.Itoa(r.pair))
		}
		g.rows = append(g.rows, append(row, runRow(th, r.run)...))
	}
	return g, base, nil
}

// runRow reads a run's summary: latencies from its histogram when it has
// one (exact, in ms), else from its attributes.
func runRow(th *starlark.Thread, run starlark.Value) []string {
	row := []string{labelOf(run, ""), cell(starval.Attr(run, "count")), cell(starval.Attr(run, "rps")),
		cell(starval.Attr(run, "mean"))}
	if h, ok := run.(hdrer); ok {
		return append(hdrRow(row, h.Hdr()), errorsCell(starval.Attr(run, "errors")))
	}
	p, _ := starval.Attr(run, "p").(starlark.Callable)
	for _, q := range metricname.SummaryQuantiles {
		var v starlark.Value
		if p != nil {
			v, _ = starlark.Call(th, p, starlark.Tuple{starlark.Float(q)}, nil)
		}
		row = append(row, cell(v))
	}
	return append(row, cell(starval.Attr(run, "max")), errorsCell(starval.Attr(run, "errors")))
}

func hdrRow(row []string, h *hdrhistogram.Histogram) []string {
	row[1] = strconv.FormatInt(h.TotalCount(), 10)
	row[3] = ms(h.Mean())
	for _, q := range metricname.SummaryQuantiles {
		row = append(row, ms(float64(h.ValueAtQuantile(q))))
	}
	return append(row, ms(float64(h.Max())))
}

// ms formats microseconds as milliseconds, rounded to the nanosecond so
// that a mean does not print float noise.
func ms(us float64) string {
	return float(math.Round(fmtnum.Finite(us)*1000) / 1e6)
}

// errorsCell is a count, or the sum of a dict of counts by class.
func errorsCell(v starlark.Value) string {
	d, ok := v.(starlark.IterableMapping)
	if !ok {
		return cell(v)
	}
	var n int64
	for _, kv := range d.Items() {
		if i, ok := kv[1].(starlark.Int); ok {
			x, _ := i.Int64()
			n += x
		}
	}
	return strconv.FormatInt(n, 10)
}

// windowsGrid has one row per window: the run's label (arm and pair in an
// experiment), the window's index, then its fields, start first.
func windowsGrid(rs []taggedRun, tagged bool) (grid, error) {
	fields := windowFields(rs)
	var g grid
	if tagged {
		g.header = append(g.header, "arm", "pair")
	}
	g.header = append(append(g.header, "label", "window"), fields...)
	for i, r := range rs {
		ws := starval.Attr(r.run, "windows")
		if ws == nil {
			return g, fmt.Errorf("item %d is a %s without windows", i, r.run.Type())
		}
		for j, w := range itemsOf(ws) {
			row := []string{}
			if tagged {
				row = append(row, r.arm, strconv.Itoa(r.pair))
			}
			row = append(row, labelOf(r.run, ""), strconv.Itoa(j))
			for _, f := range fields {
				if f == "errors" {
					row = append(row, errorsCell(starval.Attr(w, f)))
					continue
				}
				row = append(row, cell(starval.Attr(w, f)))
			}
			g.rows = append(g.rows, row)
		}
	}
	return g, nil
}

// windowFields is the union of the windows' attribute names: "start"
// first, the others sorted.
func windowFields(rs []taggedRun) []string {
	seen := map[string]bool{}
	var names []string
	for _, r := range rs {
		for _, w := range itemsOf(starval.Attr(r.run, "windows")) {
			ha, ok := w.(starlark.HasAttrs)
			if !ok {
				continue
			}
			for _, n := range ha.AttrNames() {
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "start") != (names[j] == "start") {
			return names[i] == "start"
		}
		return names[i] < names[j]
	})
	return names
}

// dictGrid writes a table value (through its CSV method) or rows of dicts
// under the union of their keys, in first-seen order.
func dictGrid(data starlark.Value, rows []starlark.Value) (grid, error) {
	var g grid
	index := map[string]int{}
	var dicts []starlark.IterableMapping
	for i, r := range rows {
		d, ok := r.(starlark.IterableMapping)
		if !ok {
			return g, fmt.Errorf("row %d is a %s, want a dict or a run", i, r.Type())
		}
		for _, kv := range d.Items() {
			k := textOf(kv[0])
			if _, seen := index[k]; !seen {
				index[k] = len(g.header)
				g.header = append(g.header, k)
			}
		}
		dicts = append(dicts, d)
	}
	if cols := starval.Attr(data, "columns"); cols != nil {
		g.header = nil
		for _, c := range itemsOf(cols) {
			g.header = append(g.header, textOf(c))
		}
	}
	for _, d := range dicts {
		row := make([]string, len(g.header))
		for j, k := range g.header {
			v, _, _ := d.Get(starlark.String(k))
			row[j] = cell(v)
		}
		g.rows = append(g.rows, row)
	}
	return g, nil
}

// float prints f with at most 12 significant digits, so that arithmetic
// noise (1050.0000000000002) does not reach the file, and never in
// exponent form.
func float(f float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(fmtnum.Finite(f), 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// cell formats a value for CSV: exact numbers, bare strings, empty None.
func cell(v starlark.Value) string {
	switch x := v.(type) {
	case nil, starlark.NoneType:
		return ""
	case starlark.String:
		return string(x)
	case starlark.Float:
		return float(float64(x))
	}
	return v.String()
}
