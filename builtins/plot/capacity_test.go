package plot

import (
	"fmt"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// fakeCapacity has the shape of metric's capacity value: its type and the
// attributes plot.capacity reads.
type fakeCapacity struct{ attrs starlark.StringDict }

func (f *fakeCapacity) String() string        { return "capacity(fake)" }
func (f *fakeCapacity) Type() string          { return "capacity" }
func (f *fakeCapacity) Freeze()               {}
func (f *fakeCapacity) Truth() starlark.Bool  { return true }
func (f *fakeCapacity) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable") }
func (f *fakeCapacity) AttrNames() []string   { return f.attrs.Keys() }
func (f *fakeCapacity) Attr(name string) (starlark.Value, error) {
	return f.attrs[name], nil
}

// searchOf is a search at 5 ms of p99 a user times perUser (10 users at
// p99 <= 50 ms for 1), as the search measures it: the step-up, the
// bisection, repeats at the ends; runs at the busy levels ringed.
func searchOf(perUser float64, busyAt int) *fakeCapacity {
	capacity := int(50 / (5 * perUser))
	levels := []int{1, 2, 4, 8, 16, 32}
	var order []int
	for _, l := range levels {
		order = append(order, l)
		if float64(l)*5*perUser > 50 {
			break
		}
	}
	for _, l := range []int{capacity, capacity + 1} {
		for range 6 {
			order = append(order, l)
		}
	}
	var points []starlark.Value
	runs := map[int][]float64{}
	for i, l := range order {
		p99 := float64(l) * 5 * perUser * (1 + 0.03*float64(i%3-1))
		if p99 > 50 && l == capacity {
			p99 = 49.5
		}
		runs[l] = append(runs[l], p99)
		figs := starlark.NewDict(1)
		_ = figs.SetKey(starlark.String("p99"), starlark.Float(p99))
		points = append(points, starlarkstruct.FromStringDict(starlark.String("point"), starlark.StringDict{
			"level": starlark.MakeInt(l), "figures": figs, "passed": starlark.Bool(p99 <= 50), "busy": starlark.Bool(l == busyAt),
		}))
	}
	var lv []starlark.Value
	for _, l := range append(levels, capacity, capacity+1) {
		xs := runs[l]
		if len(xs) == 0 {
			continue
		}
		med := starlark.NewDict(1)
		_ = med.SetKey(starlark.String("p99"), starlark.Float(xs[len(xs)/2]))
		lv = append(lv, starlarkstruct.FromStringDict(starlark.String("level"), starlark.StringDict{"level": starlark.MakeInt(l), "median": med}))
		delete(runs, l)
	}
	slo := starlark.NewDict(1)
	_ = slo.SetKey(starlark.String("p99"), starlark.Float(50))
	return &fakeCapacity{attrs: starlark.StringDict{
		"points": starlark.NewList(points), "levels": starlark.NewList(lv), "slo": slo, "limiting": starlark.String("p99"),
		"interval": starlark.Tuple{starlark.MakeInt(capacity), starlark.MakeInt(capacity)}, "value": starlark.MakeInt(capacity),
		"unit": starlark.String("users"), "label": starlark.String(""),
	}}
}

// capacityExperiment is abab's shape over capacities: A carries 10 users,
// B 20, three pairs each.
func capacityExperiment() starlark.Value {
	runs := starlark.NewDict(2)
	_ = runs.SetKey(starlark.String("A"), starlark.NewList([]starlark.Value{searchOf(1, 0), searchOf(1, 8), searchOf(1, 0)}))
	_ = runs.SetKey(starlark.String("B"), starlark.NewList([]starlark.Value{searchOf(0.5, 0), searchOf(0.5, 0), searchOf(0.5, 16)}))
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"arms": starlark.NewList([]starlark.Value{starlark.String("A"), starlark.String("B")}), "runs": runs})
}

// TestCapacityChart: the chart names its metric, the SLO line, the arms
// and the marks, on a log y axis; it takes one capacity, a list or an
// experiment, and refuses what is not a capacity and a metric the search
// does not have, naming the builtin.
func TestCapacityChart(t *testing.T) {
	fig, err := call(t, "capacity", starlark.Tuple{capacityExperiment()})
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, fig.SVG())
	svg := string(fig.SVG())
	for _, want := range []string{"p99 by load, and the capacity at the SLO", "load (users)", "p99 latency (ms), log scale",
		"p99 limit (SLO) 50", ">A<", ">B<", "met the SLO", "broke it", "busy box"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if _, err := call(t, "capacity", starlark.Tuple{searchOf(1, 0)}); err != nil {
		t.Errorf("one capacity: %v", err)
	}
	if _, err := call(t, "capacity", starlark.Tuple{list(searchOf(1, 0), searchOf(0.5, 0))}, kw("labels", list(starlark.String("x"), starlark.String("y")))); err != nil {
		t.Errorf("a list: %v", err)
	}
	if _, err := call(t, "capacity", starlark.Tuple{list(starlark.MakeInt(3))}); err == nil || !strings.Contains(err.Error(), "plot.capacity: caps: want capacities (from capacity(...)), got a int") {
		t.Errorf("a list of ints: %v", err)
	}
	if _, err := call(t, "capacity", starlark.Tuple{searchOf(1, 0)}, kw("metric", starlark.String("mean"))); err == nil || !strings.Contains(err.Error(), `plot.capacity: metric: the search has no figure "mean"`) {
		t.Errorf("a metric the search lacks: %v", err)
	}
}

// TestCapacityChartLegibleInBrowser: as Chromium draws the two-arm chart,
// no two texts overlap and every text lies inside the figure.
func TestCapacityChartLegibleInBrowser(t *testing.T) {
	for name, c := range map[string]figureCase{
		"capacity":  {"capacity", starlark.Tuple{capacityExperiment()}, nil},
		"sweep_slo": goldenCases()["sweep_slo"],
	} {
		fig, err := call(t, c.builtin, c.args, c.kwargs...)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { checkTextsInBrowser(t, fig.SVG()) })
	}
}

// TestSweepSLO: plot.sweep's SLO line and log y axis, and the values a
// log axis cannot take refused by name.
func TestSweepSLO(t *testing.T) {
	c := goldenCases()["sweep_slo"]
	fig, err := call(t, c.builtin, c.args, c.kwargs...)
	if err != nil {
		t.Fatal(err)
	}
	if svg := string(fig.SVG()); !strings.Contains(svg, "p99 limit (SLO) 12") || !strings.Contains(svg, "log scale") {
		t.Errorf("the sweep lacks its SLO line or its log axis")
	}
	if _, err := call(t, "sweep", starlark.Tuple{sweepRows()}, kw("x", starlark.String("clients")), kw("y", starlark.String("rps")), kw("slo", starlark.String("fast"))); err == nil || !strings.Contains(err.Error(), "plot.sweep: slo must be a finite number") {
		t.Errorf("slo = \"fast\": %v", err)
	}
	if _, err := call(t, "sweep", starlark.Tuple{sweepRows()}, kw("x", starlark.String("clients")), kw("y", starlark.String("rps")), kw("log_y", starlark.True), kw("slo", starlark.MakeInt(0))); err == nil || !strings.Contains(err.Error(), "positive on a log y axis") {
		t.Errorf("slo = 0 on a log axis: %v", err)
	}
}

// TestPairsLeavesARefusedCapacityOut: plot.pairs over capacities, one of
// which the search refused (no value, not valid: the generator set the
// pace), charts the others with a gap where it stands and says which run
// it left out, rather than failing the chart; a run without a
// value that claims to be valid is still an error.
func TestPairsLeavesARefusedCapacityOut(t *testing.T) {
	capOf := func(v starlark.Value, valid bool) *fakeCapacity {
		return &fakeCapacity{attrs: starlark.StringDict{"capacity": v, "value": v, "valid": starlark.Bool(valid),
			"invalid_reason": starlark.String("at 585 the load generator may have set the pace")}}
	}
	exp := func(b0 *fakeCapacity) starlark.Value {
		runs := starlark.NewDict(2)
		_ = runs.SetKey(starlark.String("A"), list(capOf(starlark.MakeInt(59), true), capOf(starlark.MakeInt(63), true)))
		_ = runs.SetKey(starlark.String("B"), list(b0, capOf(starlark.MakeInt(483), true)))
		return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
			"arms": list(starlark.String("A"), starlark.String("B")), "runs": runs})
	}
	fig, err := call(t, "pairs", starlark.Tuple{exp(capOf(starlark.None, false))}, kw("metric", starlark.String("capacity")))
	if err != nil {
		t.Fatalf("a refused capacity fails the chart: %v", err)
	}
	if svg := string(fig.SVG()); !strings.Contains(svg, "left out, not valid: B pair 1") {
		t.Errorf("the chart does not say which run it left out")
	}
	// Every run of B refused: A alone is charted; every run refused: no chart.
	runs := starlark.NewDict(2)
	_ = runs.SetKey(starlark.String("A"), list(capOf(starlark.MakeInt(59), true)))
	_ = runs.SetKey(starlark.String("B"), list(capOf(starlark.None, false)))
	if _, err := call(t, "pairs", starlark.Tuple{starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{"runs": runs})}, kw("metric", starlark.String("capacity"))); err != nil {
		t.Errorf("an arm whose every run was refused: %v", err)
	}
	_ = runs.SetKey(starlark.String("A"), list(capOf(starlark.None, false)))
	if _, err := call(t, "pairs", starlark.Tuple{starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{"runs": runs})}, kw("metric", starlark.String("capacity"))); err == nil || !strings.Contains(err.Error(), "plot.pairs: no run has a value of capacity") {
		t.Errorf("every run refused: %v", err)
	}
	if _, err := call(t, "pairs", starlark.Tuple{exp(capOf(starlark.None, true))}, kw("metric", starlark.String("capacity"))); err == nil || !strings.Contains(err.Error(), "arm B, pair 1") {
		t.Errorf("a valid run without a value: %v", err)
	}
}
