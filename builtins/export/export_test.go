package export

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/benchbook/benchbook/builtins/internal/hgrm"
	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/codec"
	"github.com/benchbook/benchbook/runtime/testsupport/startest"
)

// fakeRun has the shape of workload's run: label, count, rps, mean, max,
// p(q) in ms, windows, errors, and Hdr() in µs from a seeded log-normal.
type fakeRun struct {
	label   string
	h       *hdrhistogram.Histogram
	windows []starlark.Value
}

func newFakeRun(seed uint64, label string, n, windows int) *fakeRun {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	r := &fakeRun{label: label, h: hdrhistogram.New(1, 3_600_000_000, 3)}
	for i := range n {
		v := int64(800 * math.Exp(0.8*rng.NormFloat64()))
		_ = r.h.RecordValue(v)
		if (i+1)%(n/windows) == 0 {
			r.windows = append(r.windows, starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
				"start": starlark.Float(float64(len(r.windows))), "count": starlark.MakeInt(n / windows),
				"rps": starlark.Float(float64(n / windows)), "p50": starlark.Float(0.8), "p99": starlark.Float(5.1),
				"errors": starlark.MakeInt(rng.IntN(2)),
			}))
		}
	}
	return r
}

func (r *fakeRun) Hdr() *hdrhistogram.Histogram { return r.h }
func (r *fakeRun) String() string               { return "run(" + r.label + ")" }
func (r *fakeRun) Type() string                 { return "run" }
func (r *fakeRun) Freeze()                      {}
func (r *fakeRun) Truth() starlark.Bool         { return true }
func (r *fakeRun) Hash() (uint32, error)        { return 0, fmt.Errorf("unhashable") }
func (r *fakeRun) AttrNames() []string          { return []string{"count", "errors", "label", "rps", "windows"} }

func (r *fakeRun) Attr(name string) (starlark.Value, error) {
	switch name {
	case "label":
		return starlark.String(r.label), nil
	case "count":
		return starlark.MakeInt64(r.h.TotalCount()), nil
	case "rps":
		return starlark.Float(float64(r.h.TotalCount()) / 10), nil
	case "errors":
		d := starlark.NewDict(2)
		_ = d.SetKey(starlark.String("timeout"), starlark.MakeInt(2))
		_ = d.SetKey(starlark.String("http_500"), starlark.MakeInt(3))
		return d, nil
	case "windows":
		return starlark.NewList(append([]starlark.Value(nil), r.windows...)), nil
	}
	return nil, nil
}

func testThread(t *testing.T) *starlark.Thread {
	return startest.Thread(t, startest.Options{})
}

func call(t *testing.T, name string, args starlark.Tuple, kwargs ...starlark.Tuple) *File {
	t.Helper()
	v, err := starlark.Call(testThread(t), members.Members[name], args, kwargs)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*File)
}

// hgrmLine is one parsed percentile line.
type hgrmLine struct {
	value, q, inverse float64
	count             int64
	last              bool
}

func parseHGRM(t *testing.T, text string) (lines []hgrmLine, footer []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Scan()
	if got := strings.Fields(sc.Text()); strings.Join(got, " ") != "Value Percentile TotalCount 1/(1-Percentile)" {
		t.Fatalf("header %q", sc.Text())
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0:
		case strings.HasPrefix(f[0], "#["):
			footer = append(footer, sc.Text())
		default:
			l := hgrmLine{last: len(f) == 3}
			l.value, _ = strconv.ParseFloat(f[0], 64)
			l.q, _ = strconv.ParseFloat(f[1], 64)
			l.count, _ = strconv.ParseInt(f[2], 10, 64)
			if !l.last {
				l.inverse, _ = strconv.ParseFloat(f[3], 64)
			}
			lines = append(lines, l)
		}
	}
	return lines, footer
}

func TestHGRMParsesBackToTheHistogram(t *testing.T) {
	r := newFakeRun(1, "A", 50000, 10)
	text := call(t, "hgrm", starlark.Tuple{r}).Text
	lines, footer := parseHGRM(t, text)
	if len(lines) < 50 {
		t.Fatalf("only %d percentile lines", len(lines))
	}
	h := r.Hdr()
	cum := cumulative(h)
	total := float64(h.TotalCount())
	for i, l := range lines {
		us := int64(math.Round(l.value * 1000))
		// The line's value is the first one whose cumulative count reaches
		// the percentile, and its count is that cumulative count.
		c, ok := cum[us]
		if !ok || c.upTo != l.count || (l.q > 0 && float64(c.before) >= l.q*total-1e-6) || (l.q == 0 && c.before != 0) || float64(c.upTo) < l.q*total-1e-6 {
			t.Errorf("line %d: %.3f ms, count %d at p%v; histogram: %+v (found %v)", i, l.value, l.count, l.q*100, c, ok)
		}
		if l.q == 0.5 || l.q == 0.9 || l.q == 0.99 {
			if want := h.ValueAtQuantile(l.q * 100); !h.ValuesAreEquivalent(us, want) {
				t.Errorf("p%v: %.3f ms, histogram's quantile %d µs", l.q*100, l.value, want)
			}
		}
		if i > 0 && (l.q < lines[i-1].q || l.count < lines[i-1].count) {
			t.Errorf("line %d: percentiles or counts go backwards", i)
		}
		if !l.last && math.Abs(l.inverse-1/(1-l.q)) > 0.01*l.inverse+0.01 {
			t.Errorf("line %d: 1/(1-p) = %v for p = %v", i, l.inverse, l.q)
		}
		if l.last != (i == len(lines)-1) {
			t.Errorf("line %d: only the last line (p = 1) lacks 1/(1-p)", i)
		}
	}
	if last := lines[len(lines)-1]; last.q != 1 || last.count != h.TotalCount() {
		t.Errorf("last line p=%v count=%d, want 1 and %d", last.q, last.count, h.TotalCount())
	}
	checkFooter(t, footer, h)
}

// counts are the cumulative counts before and up to a recorded value.
type counts struct{ before, upTo int64 }

// cumulative maps each recorded value (the highest of its bucket, as the
// percentile format prints it) to its cumulative counts.
func cumulative(h *hdrhistogram.Histogram) map[int64]counts {
	out := map[int64]counts{}
	var n int64
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out[b.To] = counts{before: n, upTo: n + b.Count}
			n += b.Count
		}
	}
	return out
}

// checkFooter compares the footer with the histogram and with the library's
// own PercentilesPrint (for the geometry line).
func checkFooter(t *testing.T, footer []string, h *hdrhistogram.Histogram) {
	t.Helper()
	if len(footer) != 3 {
		t.Fatalf("footer has %d lines: %q", len(footer), footer)
	}
	var mean, sd, max float64
	var total int64
	if _, err := fmt.Sscanf(footer[0], "#[Mean    = %f, StdDeviation   = %f]", &mean, &sd); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(footer[1], "#[Max     = %f, Total count    = %d]", &max, &total); err != nil {
		t.Fatal(err)
	}
	if math.Abs(mean-h.Mean()/1000) > 0.001 || total != h.TotalCount() || math.Abs(max-float64(h.Max())/1000) > 0.001 {
		t.Errorf("footer %q disagrees with the histogram", footer[:2])
	}
	var lib bytes.Buffer
	_, _ = h.PercentilesPrint(&lib, 1, 1000)
	libLines := strings.Split(strings.TrimSpace(lib.String()), "\n")
	if want := libLines[len(libLines)-1]; footer[2] != want {
		t.Errorf("geometry %q, library says %q", footer[2], want)
	}
}

func TestHGRMEmptyHistogram(t *testing.T) {
	text := hgrm.Text(hdrhistogram.New(1, 1000, 2), hgrm.Options{})
	lines, footer := parseHGRM(t, text)
	if len(lines) != 0 || len(footer) != 3 || strings.Contains(text, "NaN") {
		t.Errorf("empty histogram gave:\n%s", text)
	}
}

func readCSV(t *testing.T, f *File) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(f.Text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestCSVShapes(t *testing.T) {
	a, b := newFakeRun(1, "A", 4000, 4), newFakeRun(2, "B", 6000, 6)
	runs := starlark.NewList([]starlark.Value{a, b})
	recs := readCSV(t, call(t, "csv", starlark.Tuple{runs}))
	if strings.Join(recs[0], ",") != "label,count,rps,mean_ms,p50_ms,p90_ms,p99_ms,p999_ms,max_ms,errors" || len(recs) != 3 {
		t.Fatalf("per-run CSV: %q", recs)
	}
	if recs[2][0] != "B" || recs[2][1] != "6000" || recs[2][len(runColumns)-1] != "5" {
		t.Errorf("row of B: %q", recs[2])
	}
	p99, _ := strconv.ParseFloat(recs[1][6], 64)
	if want := float64(a.h.ValueAtQuantile(99)) / 1000; p99 != want {
		t.Errorf("p99_ms %v, histogram %v", p99, want)
	}
	win := readCSV(t, call(t, "csv", starlark.Tuple{runs}, starlark.Tuple{starlark.String("windows"), starlark.True}))
	if len(win) != 1+4+6 || win[0][0] != "label" || win[0][2] != "start" {
		t.Fatalf("per-window CSV header %q, %d rows", win[0], len(win))
	}
	for _, rec := range win {
		if len(rec) != len(win[0]) {
			t.Fatalf("ragged row %q", rec)
		}
	}
}

func TestCSVExperimentAndRows(t *testing.T) {
	runs := starlark.NewDict(2)
	_ = runs.SetKey(starlark.String("A"), starlark.NewList([]starlark.Value{newFakeRun(1, "A1", 1000, 2), newFakeRun(2, "A2", 1000, 2)}))
	_ = runs.SetKey(starlark.String("B"), starlark.NewList([]starlark.Value{newFakeRun(3, "B1", 1000, 2), newFakeRun(4, "B2", 1000, 2)}))
	exp := starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"runs": runs, "arms": starlark.NewList([]starlark.Value{starlark.String("B"), starlark.String("A")}),
	})
	recs := readCSV(t, call(t, "csv", starlark.Tuple{exp}))
	if len(recs) != 5 || recs[0][0] != "arm" || recs[0][1] != "pair" || recs[1][0] != "B" || recs[4][1] != "2" {
		t.Errorf("experiment CSV: %q", recs)
	}
	d1, d2 := starlark.NewDict(2), starlark.NewDict(2)
	_ = d1.SetKey(starlark.String("clients"), starlark.MakeInt(4))
	_ = d1.SetKey(starlark.String("rps"), starlark.Float(0.1))
	_ = d2.SetKey(starlark.String("clients"), starlark.MakeInt(8))
	_ = d2.SetKey(starlark.String("pool"), starlark.String("a,b"))
	recs = readCSV(t, call(t, "csv", starlark.Tuple{starlark.NewList([]starlark.Value{d1, d2})}))
	want := [][]string{{"clients", "rps", "pool"}, {"4", "0.1", ""}, {"8", "", "a,b"}}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("rows CSV %q, want %q", recs, want)
	}
}

func TestJSON(t *testing.T) {
	d := starlark.NewDict(3)
	_ = d.SetKey(starlark.String("z"), starlark.Float(math.NaN()))
	_ = d.SetKey(starlark.String("a"), starlark.NewList([]starlark.Value{starlark.MakeInt(1), starlark.String("<x>")}))
	_ = d.SetKey(starlark.String("s"), starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{"k": starlark.True}))
	text := call(t, "json", starlark.Tuple{d}).Text
	if !strings.HasPrefix(text, "{\n  \"z\": null,\n  \"a\"") || !strings.Contains(text, "<x>") {
		t.Errorf("order, NaN or escaping wrong:\n%s", text)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(text), &back); err != nil {
		t.Fatal(err)
	}
	if back["s"].(map[string]any)["k"] != true {
		t.Errorf("struct lost: %v", back)
	}
}

func TestFileCodecAndDownload(t *testing.T) {
	f := call(t, "csv", starlark.Tuple{newFakeRun(1, "A: seq/scan", 1000, 2)})
	if f.Name != "A-seq-scan.csv" || f.MIME != "text/csv" {
		t.Errorf("name %q mime %q", f.Name, f.MIME)
	}
	data, err := codec.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	v, err := codec.Decode(data, Module().Decoders)
	if err != nil {
		t.Fatal(err)
	}
	if *v.(*File) != *f {
		t.Error("file changed through the codec")
	}
	if d := f.Downloads(); len(d) != 1 || string(d[0].Data) != f.Text {
		t.Error("download is not the file's text")
	}
	if !strings.Contains(f.HTML(), "A: seq/scan") {
		t.Error("HTML preview lacks the data")
	}
}

func TestStarlark(t *testing.T) {
	startest.RunFiles(t, "testdata/*.star", func(t *testing.T) startest.Options {
		return startest.Options{Modules: []runtime.Module{Module()}, Globals: starlark.StringDict{
			"run_a": newFakeRun(1, "A", 2000, 4),
			"run_b": newFakeRun(2, "B", 2000, 4),
		}}
	})
}

// TestCSVPreviewIsATable: a CSV export previews as a table whose numbers
// read like the record's other tables and whose text is escaped.
func TestCSVPreviewIsATable(t *testing.T) {
	f := &File{Name: "x.csv", MIME: "text/csv", Text: "arm,rps\n<b>A</b>,1240.66666667\nB,11365.5\n"}
	h := f.HTML()
	for _, want := range []string{"<th>rps</th>", `<td class="num">1241</td>`, `<td class="num">11,366</td>`, "&lt;b&gt;A&lt;/b&gt;"} {
		if !strings.Contains(h, want) {
			t.Errorf("preview lacks %s:\n%s", want, h)
		}
	}
	if bad := (&File{Name: "y.csv", MIME: "text/csv", Text: "a,\"b\n"}).HTML(); !strings.Contains(bad, "<pre") {
		t.Errorf("unparsable CSV should preview as text:\n%s", bad)
	}
}
