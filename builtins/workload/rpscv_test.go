package workload

import (
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/benchbook/benchbook/builtins/workload/loadgen"
)

// cv is the coefficient of variation by the textbook sums (Σx, Σx²), a
// route to it other than rpsCV's.
func cv(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s, s2 = s+x, s2+x*x
	}
	n := float64(len(xs))
	return math.Sqrt((s2-s*s/n)/(n-1)) / (s / n)
}

// TestRPSCVOfWindows: rps_cv over the windows' req/s, without a last
// window too short to have a rate; NaN where there is no spread to tell.
func TestRPSCVOfWindows(t *testing.T) {
	run := func(measured time.Duration, rps ...float64) *Run {
		res := &loadgen.Result{Hist: newHist(), Errors: map[string]int64{}, Measured: measured}
		for i, x := range rps {
			res.Windows = append(res.Windows, loadgen.Window{Start: 0.5 * float64(i), RPS: x})
		}
		return newRun("http", loadgen.Spec{Label: "x"}, res)
	}
	for _, c := range []struct {
		r    *Run
		want float64
	}{
		{fixedRun(), cv([]float64{440, 460})},
		{run(1500*time.Millisecond, 100, 300, 50), cv([]float64{100, 300, 50})},
		{run(1010*time.Millisecond, 100, 300, 9000), cv([]float64{100, 300})}, // 10 ms last window
		{run(500*time.Millisecond, 100), math.NaN()},
		{run(time.Second, 0, 0), math.NaN()},
	} {
		v, err := c.r.Attr("rps_cv")
		got := float64(v.(starlark.Float))
		if err != nil || !(math.Abs(got-c.want) < 1e-12 || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("windows %+v: rps_cv = %v, %v; want %v", c.r.d.Windows, v, err, c.want)
		}
	}
}

// TestRPSCVSeesAStall: a target that stops answering for 400 ms of a 1.2 s
// run in 200 ms windows leaves two of six windows (nearly) empty: whatever
// the other four hold, their CV is then at least that of four equal values
// and two zeros, 0.77, where the mean req/s alone says nothing. A steady
// target's figure is logged beside it; on a busy box it is noise, not a
// bound.
func TestRPSCVSeesAStall(t *testing.T) {
	var once sync.Once
	var start time.Time
	stalling := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		once.Do(func() { start = time.Now() })
		if at := time.Since(start); at > 400*time.Millisecond && at < 800*time.Millisecond {
			time.Sleep(800*time.Millisecond - at)
		}
		time.Sleep(2 * time.Millisecond)
	}))
	defer stalling.Close()
	steady := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(2 * time.Millisecond) }))
	defer steady.Close()
	g := mustExec(t, `
opts = dict(clients = 2, duration = "1.2s", warmup = 0, window = "200ms")
stalled = workload.http(url1, **opts)
flat = workload.http(url2, **opts)
`, starlark.StringDict{"url1": str(stalling.URL), "url2": str(steady.URL)})
	stalled, flat := g["stalled"].(*Run), g["flat"].(*Run)
	a, b := stalled.rpsCV(), flat.rpsCV()
	t.Logf("rps_cv: stalled %.3f (req/s by window %v), steady %.3f", a, rpsOf(stalled), b)
	if want := cv(rpsOf(stalled)); math.Abs(a-want) > 1e-9 {
		t.Errorf("stalled rps_cv %v, the windows' own %v", a, want)
	}
	if a < 0.6 {
		t.Errorf("a 400 ms stall in 1.2 s: rps_cv %.3f, want at least 0.6", a)
	}
}

func rpsOf(r *Run) []float64 {
	var out []float64
	for _, w := range r.d.Windows {
		out = append(out, w.RPS)
	}
	return out
}
