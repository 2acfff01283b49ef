package workload

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// TestTrendWarning (issue 32, case 8): the new user's B run climbed 2,309
// -> 4,137 -> 5,165 req/s window by window past its warm-up and nothing
// warned; now the run says which metric trended and by how much. Steady
// windows, noise without a trend, and an open loop's fixed rate do not.
func TestTrendWarning(t *testing.T) {
	w := func(rps ...float64) []windowStat {
		out := make([]windowStat, len(rps))
		for i, x := range rps {
			out[i] = windowStat{RPS: x, P50: 1000 / x}
		}
		return out
	}
	ws := trendWarnings(w(2309, 4137, 5165), false)
	if len(ws) != 2 || !strings.Contains(ws[0], "not steady: rps rose from 2,309 to 5,165 req/s (+124 %) between the first and the last third of the measured windows (2,309, 4,137, 5,165)") ||
		!strings.Contains(ws[1], "p50 fell") {
		t.Errorf("cold start: %q", ws)
	}
	for _, quiet := range [][]float64{
		{5000, 5100, 4950}, // steady
		{5000, 4300, 5600}, // noisy, no trend
		{5000, 5300, 5600}, // +12 % over three windows: under the short limit
		{5000, 5200, 4900, 5100, 5050, 4950, 5150, 5000, 4980}, // nine steady windows
	} {
		if ws := trendWarnings(w(quiet...), false); len(ws) != 0 {
			t.Errorf("%v: %q", quiet, ws)
		}
	}
	long := w(3000, 3100, 3050, 3600, 3700, 3650, 4000, 4100, 4050)
	if ws := trendWarnings(long, false); len(ws) == 0 || !strings.Contains(ws[0], "rps rose from 3,050 to 4,050") {
		t.Errorf("nine windows climbing: %q", ws)
	}
	if ws := trendWarnings(w(2309, 4137, 5165), true); len(ws) != 1 || !strings.Contains(ws[0], "p50") {
		t.Errorf("open loop: rps is the schedule's, only p50 counts: %q", ws)
	}
}

// warmingServer answers slowly at first and faster over its first 1.5 s
// (a cold cache filling), then in a steady 5 ms.
func warmingServer(t *testing.T) *httptest.Server {
	var once sync.Once
	var start time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		once.Do(func() { start = time.Now() })
		cold := max(0, 1-time.Since(start).Seconds()/1.5)
		time.Sleep(5*time.Millisecond + time.Duration(cold*float64(25*time.Millisecond)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestWarmupAuto: a run measured from the first request of a warming target
// trends and says so; warmup = "auto" waits for it (within its bound),
// records how long it took, and the run it measures is steady.
func TestWarmupAuto(t *testing.T) {
	g := mustExec(t, `
cold = workload.http(url1, clients = 2, duration = "1.5s", warmup = 0, window = "0.5s")
warm = workload.http(url2, clients = 2, duration = "1.5s", warmup = "auto", window = "0.5s")
`, starlark.StringDict{"url1": str(warmingServer(t).URL), "url2": str(warmingServer(t).URL)})
	cold, warm := g["cold"].(*Run), g["warm"].(*Run)
	if !hasWarning(cold, "not steady: rps rose") {
		t.Errorf("a cold run without a trend warning: %q (windows %+v)", cold.d.Warnings, cold.d.Windows)
	}
	if warm.d.WarmupS < 1.5 || warm.d.WarmupS > autoWarmupMax.Seconds()+5 || !warm.d.WarmupAuto {
		t.Errorf("auto warm-up took %.1f s (want past the 1.5 s of cold start)", warm.d.WarmupS)
	}
	if hasWarning(warm, "not steady") {
		t.Errorf("after warmup = \"auto\": %q", warm.d.Warnings)
	}
	if v, _ := warm.Attr("warmup_s"); v != starlark.Float(warm.d.WarmupS) {
		t.Errorf("warmup_s = %v", v)
	}
	if _, err := execStar(t, t.Context(), `workload.http("http://127.0.0.1:1", clients = 1, duration = "1s", warmup = "soon")`, nil); err == nil ||
		!strings.Contains(err.Error(), `for parameter "warmup": malformed duration "soon"`) {
		t.Errorf("bad warmup: %v", err)
	}
}

func hasWarning(r *Run, part string) bool {
	for _, w := range r.d.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}
