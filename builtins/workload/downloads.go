package workload

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"

	"github.com/benchbook/benchbook/builtins/internal/hgrm"
	"github.com/benchbook/benchbook/runtime/record"
)

// Downloads offers a run's data from the record, with no server: its
// latency distribution in HdrHistogram's .hgrm text (for HdrHistogram's
// plotter) and its windows as CSV.
func (r *Run) Downloads() []record.Download {
	name := fileName(r.d.Label, r.d.Kind)
	var out []record.Download
	if r.d.Hist != nil && r.d.Hist.TotalCount() > 0 {
		text := hgrm.Text(r.d.Hist, hgrm.Options{Scale: 1000})
		out = append(out, record.Download{Name: name + ".hgrm", MIME: "text/plain", Data: []byte(text)})
	}
	if len(r.d.Windows) > 0 {
		out = append(out, record.Download{Name: name + "_windows.csv", MIME: "text/csv", Data: r.windowsCSV()})
	}
	return out
}

// windowsCSV is one row per window: start, count, rps, p50, p99, errors.
func (r *Run) windowsCSV() []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"start_s", "count", "rps", "p50_ms", "p99_ms", "errors"})
	for _, win := range r.d.Windows {
		var errs int64
		for _, n := range win.Errors {
			errs += n
		}
		w.Write([]string{ff(win.Start), strconv.FormatInt(win.Count, 10), ff(win.RPS), ff(win.P50), ff(win.P99), strconv.FormatInt(errs, 10)})
	}
	w.Flush()
	return buf.Bytes()
}

func ff(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// fileName makes a label safe as a file name ("GET http://..." -> "GET_http_...").
func fileName(label, kind string) string {
	if label == "" {
		label = kind
	}
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, label)
	if len(clean) > 40 {
		clean = clean[:40]
	}
	return "run_" + clean
}
